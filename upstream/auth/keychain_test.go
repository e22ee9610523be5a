package auth

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

// TestKeychainRoundTripLargeToken keeps a login with a large access token
// and refresh token (what some providers issue: 2,000 and 1,000 bytes) in
// the OS keyring through the daemon's token store, reads it back whole and
// deletes it. It touches the real keyring of the user running it (the
// macOS login Keychain), so it runs only when MCPX_TEST_KEYCHAIN=1:
// scripts/test-macos sets it.
func TestKeychainRoundTripLargeToken(t *testing.T) {
	if os.Getenv("MCPX_TEST_KEYCHAIN") != "1" {
		t.Skip("uses the real OS keyring: set MCPX_TEST_KEYCHAIN=1 (scripts/test-macos does)")
	}
	s, err := OpenStore(func(k string) string {
		if k == StoreEnv {
			return "keyring"
		}
		return ""
	}, t.TempDir(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	h := config.ServerHash(fmt.Sprintf("%016x", uint64(time.Now().UnixNano())^uint64(os.Getpid())))
	t.Cleanup(func() {
		if err := s.Delete(h); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	want := &Record{
		ServerHash: h, Server: "keychain-test", Resource: "https://mcp.example.test/mcp",
		Issuer: "https://auth.example.test", TokenEndpoint: "https://auth.example.test/token",
		ClientID: "mcpx-test", AuthMethod: "none", TokenType: "Bearer",
		AccessToken:  "at-" + strings.Repeat("A1b2C3d4", 250), // 2,003 bytes
		RefreshToken: "rt-" + strings.Repeat("z9Y8", 250),     // 1,003 bytes
		Scope:        "read write", Expiry: time.Now().Add(time.Hour).UTC().Truncate(time.Second),
		ObtainedAt: time.Now().UTC().Truncate(time.Second),
	}
	if err := s.Save(want); err != nil {
		t.Fatalf("save a %d-byte access token and a %d-byte refresh token in %s: %v", len(want.AccessToken), len(want.RefreshToken), s.Name(), err)
	}
	got, err := s.Load(h)
	if err != nil || got == nil {
		t.Fatalf("load from %s: %v, %v", s.Name(), got, err)
	}
	if got.AccessToken != want.AccessToken || got.RefreshToken != want.RefreshToken ||
		!got.Expiry.Equal(want.Expiry) || got.ClientID != want.ClientID || got.Issuer != want.Issuer {
		t.Fatalf("%s gave back another record: access token %d bytes (want %d), refresh token %d bytes (want %d)",
			s.Name(), len(got.AccessToken), len(want.AccessToken), len(got.RefreshToken), len(want.RefreshToken))
	}
	if err := s.Delete(h); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(h); got != nil || err != nil {
		t.Fatalf("load after delete: %v, %v", got, err)
	}
}
