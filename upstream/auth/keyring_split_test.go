package auth

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/zalando/go-keyring"

	"github.com/mcpx-dev/mcpx/config"
)

// keychainModel is a keyring with the Keychain's limit as go-keyring
// reaches it on macOS: Set sends
// `add-generic-password -U -s S -a A -w go-keyring-base64:<base64>` to
// `security -i`, and refuses a line over 4,096 bytes (the quotes are
// counted whether or not go-keyring would add them).
type keychainModel struct {
	mu    sync.Mutex
	items map[string]string
}

func keychainLine(service, account, secret string) string {
	return fmt.Sprintf("add-generic-password -U -s '%s' -a '%s' -w '%s'\n", service, account,
		"go-keyring-base64:"+base64.StdEncoding.EncodeToString([]byte(secret)))
}

func (m *keychainModel) Get(service, account string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.items[service+"/"+account]
	if !ok {
		return "", keyring.ErrNotFound
	}
	return v, nil
}

func (m *keychainModel) Set(service, account, secret string) error {
	if len(keychainLine(service, account, secret)) > 4096 {
		return keyring.ErrSetDataTooBig
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.items == nil {
		m.items = map[string]string{}
	}
	m.items[service+"/"+account] = secret
	return nil
}

func (m *keychainModel) Delete(service, account string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.items[service+"/"+account]; !ok {
		return keyring.ErrNotFound
	}
	delete(m.items, service+"/"+account)
	return nil
}

func (m *keychainModel) accounts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k := range m.items {
		out = append(out, strings.TrimPrefix(k, keyringService+"/"))
	}
	return out
}

// bigRecord is the record the issue measured: a 2,000-byte access token
// and a 1,000-byte refresh token.
func bigRecord(h config.ServerHash, access, refresh int) *Record {
	return &Record{
		ServerHash: h, Server: "remote", Resource: "https://mcp.example.com/mcp", Issuer: "https://auth.example.com",
		TokenEndpoint: "https://auth.example.com/token", ClientID: "mcpx-" + strings.Repeat("c", 40), AuthMethod: "none",
		AccessToken: strings.Repeat("A", access), RefreshToken: strings.Repeat("R", refresh), TokenType: "Bearer",
		Scope: "read write", Expiry: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC), ObtainedAt: time.Date(2030, 1, 2, 2, 4, 5, 0, time.UTC),
	}
}

func TestKeyringSplitsRecordsTheKeychainCannotTake(t *testing.T) {
	m := &keychainModel{}
	k := &KeyringStore{Secrets: m}
	h := config.ServerHash("0123456789abcdef")
	rec := bigRecord(h, 2000, 1000)

	// One item cannot hold it: that is what failed before.
	whole, _ := jsonBytes(rec)
	if err := m.Set(keyringService, string(h), string(whole)); !errors.Is(err, keyring.ErrSetDataTooBig) {
		t.Fatalf("the model takes the %d-byte record in one item: %v", len(whole), err)
	}
	m.Delete(keyringService, string(h))

	for _, size := range [][2]int{{2000, 1000}, {9000, 4000}, {2000, 1000}, {100, 50}, {20000, 20000}} {
		rec := bigRecord(h, size[0], size[1])
		if err := k.Save(rec); err != nil {
			t.Fatalf("Save %v: %v", size, err)
		}
		got, err := k.Load(h)
		if err != nil || !reflect.DeepEqual(got, rec) {
			t.Fatalf("Load after Save %v: %v, equal=%v", size, err, reflect.DeepEqual(got, rec))
		}
		// Exactly the parts the record needs: none left from a longer one.
		b, _ := jsonBytes(rec)
		want := 1
		if parts := splitRecord(b); len(parts) > 1 {
			want += len(parts)
		}
		if n := len(m.accounts()); n != want {
			t.Fatalf("after Save %v (%d bytes): %d items %v, want %d", size, len(b), n, m.accounts(), want)
		}
	}

	// A damaged part is an error, never a record.
	if err := k.Save(bigRecord(h, 5000, 0)); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	m.items[keyringService+"/"+partAccount(h, 2)] = strings.Repeat("x", 10)
	m.mu.Unlock()
	if rec, err := k.Load(h); rec != nil || err == nil || !strings.Contains(err.Error(), "do not add up") {
		t.Fatalf("Load with a damaged part: %v, %v", rec != nil, err)
	}
	m.Delete(keyringService, partAccount(h, 2))
	if rec, err := k.Load(h); rec != nil || err == nil || !strings.Contains(err.Error(), "part 2 of") {
		t.Fatalf("Load with a missing part: %v, %v", rec != nil, err)
	}

	if err := k.Delete(h); err != nil {
		t.Fatal(err)
	}
	if a := m.accounts(); len(a) != 0 {
		t.Fatalf("Delete left %v", a)
	}
	if rec, err := k.Load(h); rec != nil || err != nil {
		t.Fatalf("Load after Delete: %v, %v", rec != nil, err)
	}
}

// A record stored whole by an earlier mcpx still loads.
func TestKeyringReadsAWholeRecord(t *testing.T) {
	m := &keychainModel{}
	h := config.ServerHash("fedcba9876543210")
	rec := bigRecord(h, 100, 10)
	b, _ := jsonBytes(rec)
	if err := m.Set(keyringService, string(h), string(b)); err != nil {
		t.Fatal(err)
	}
	got, err := (&KeyringStore{Secrets: m}).Load(h)
	if err != nil || !reflect.DeepEqual(got, rec) {
		t.Fatalf("Load = %v, %v", got, err)
	}
}

// Every part fits the Keychain's line whatever it holds, and parts join
// back to the record without cutting a UTF-8 sequence.
func TestSplitRecord(t *testing.T) {
	for _, s := range []string{"", "x", strings.Repeat("a", maxItem), strings.Repeat("a", maxItem+1), strings.Repeat("é€𝄞", 2000)} {
		parts := splitRecord([]byte(s))
		var joined []byte
		for i, p := range parts {
			if len(p) > maxItem || len(p) == 0 && len(s) > 0 {
				t.Fatalf("part %d of %d bytes", i, len(p))
			}
			if !utf8.Valid(p) {
				t.Fatalf("part %d cuts a UTF-8 sequence", i)
			}
			line := keychainLine(keyringService, partAccount("0123456789abcdef", maxParts), string(p))
			if len(line) > 4096 {
				t.Fatalf("part %d makes a %d-byte Keychain line", i, len(line))
			}
			joined = append(joined, p...)
		}
		if string(joined) != s {
			t.Fatalf("parts of %d bytes do not join back", len(s))
		}
	}
}

func jsonBytes(r *Record) ([]byte, error) { return json.Marshal(r) }

// The same through go-keyring into a real Secret Service on a real
// dbus-daemon (what Linux desktops run).
func TestKeyringSplitInSecretService(t *testing.T) {
	ss := startSecretService(t)
	k := &KeyringStore{}
	h := config.ServerHash("00112233445566ff")
	rec := bigRecord(h, 2000, 1000)
	if err := k.Save(rec); err != nil {
		t.Fatal(err)
	}
	got, err := k.Load(h)
	if err != nil || !reflect.DeepEqual(got, rec) {
		t.Fatalf("Load = %v, equal=%v", err, reflect.DeepEqual(got, rec))
	}
	b, _ := jsonBytes(rec)
	ss.mu.Lock()
	n := len(ss.items)
	ss.mu.Unlock()
	if want := 1 + len(splitRecord(b)); n != want {
		t.Fatalf("%d items in the Secret Service, want %d", n, want)
	}
	if err := k.Delete(h); err != nil {
		t.Fatal(err)
	}
	if got, err := k.Load(h); got != nil || err != nil {
		t.Fatalf("after Delete: %v, %v", got != nil, err)
	}
}
