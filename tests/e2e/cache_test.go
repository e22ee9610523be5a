package e2e

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/testkit"
)

// cacheOf opens the store and schema cache of e's user.
func cacheOf(t *testing.T, e *Env) (*cache.Store, *cache.Schemas, config.Paths) {
	t.Helper()
	p, err := config.DefaultPaths(func(k string) string {
		for _, kv := range e.Environ() {
			if after, ok := strings.CutPrefix(kv, k+"="); ok {
				return after
			}
		}
		return ""
	})
	if err != nil {
		t.Fatal(err)
	}
	store, err := cache.OpenStore(p.CAS())
	if err != nil {
		t.Fatal(err)
	}
	return store, cache.NewSchemas(store, p.Schemas()), p
}

func demoHash(t *testing.T) config.ServerHash {
	return config.Builtin(mcpxdBin).Servers["demo"].Hash()
}

func namespace(t *testing.T, e *Env, name string) api.Namespace {
	t.Helper()
	var ns api.NamespacesResponse
	e.JSON(&ns, "ls")
	for _, n := range ns.Namespaces {
		if n.Name == name {
			return n
		}
	}
	t.Fatalf("no namespace %s in %+v", name, ns)
	return api.Namespace{}
}

func stopAndWait(t *testing.T, e *Env) {
	t.Helper()
	e.MustOK("stop")
	testkit.Eventually(t, 60*time.Second, "the daemon to exit", func() bool { return len(daemonPIDs("builtin")) == 0 })
}

// The trap of issue 4: a snapshot written by an older program whose tool
// type had no annotations must not be served, or the destructive-call
// policy silently never fires.
func TestOldSnapshotWithoutAnnotationsIsNotServed(t *testing.T) {
	e := NewEnv(t)
	e.MustOK("refresh")
	stopAndWait(t, e)
	store, schemas, p := cacheOf(t, e)
	h := demoHash(t)
	cur, err := schemas.Load(h)
	if err != nil {
		t.Fatal(err)
	}

	// What the old program wrote: its tool type had no annotations.
	type oldTool struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	type oldSnapshot struct {
		Format     string     `json:"format"`
		ServerHash string     `json:"serverHash"`
		FetchedAt  *time.Time `json:"fetchedAt,omitempty"`
		Tools      []oldTool  `json:"tools"`
	}
	old := oldSnapshot{Format: cache.FormatOf(reflect.TypeOf(oldSnapshot{})), ServerHash: string(h), FetchedAt: cur.FetchedAt}
	for _, raw := range cur.Tools {
		var ot oldTool
		if err := json.Unmarshal(raw, &ot); err != nil {
			t.Fatal(err)
		}
		old.Tools = append(old.Tools, ot)
	}
	blob, _ := json.Marshal(old)
	d, _, err := store.Put(bytes.NewReader(blob))
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := json.Marshal(cache.Ref{ServerHash: h, Digest: d, Format: old.Format, SavedAt: time.Now().UTC()})
	if err := os.WriteFile(filepath.Join(p.Schemas(), string(h)+".json"), ref, 0o644); err != nil {
		t.Fatal(err)
	}

	if n := namespace(t, e, "demo"); n.State != api.StateUnread {
		t.Fatalf("the old snapshot was served: %+v", n)
	}
	// The call refetches, learns delete_note is destructive, and refuses.
	r := e.Mcpx("call", "demo.delete_note", "name=draft")
	if r.Code != 4 || !strings.Contains(r.Stderr, "--yes") || !strings.Contains(r.Stderr, "demo.delete_note") {
		t.Fatalf("delete_note without --yes after an old snapshot: want exit 4 naming the tool and --yes\n%s", r)
	}
	if n := namespace(t, e, "demo"); n.State != api.StateCached {
		t.Fatalf("after the refetch: %+v", n)
	}
	if r := e.MustOK("call", "--yes", "demo.delete_note", "name=draft"); r.Stdout != "deleted draft" {
		t.Fatalf("with --yes:\n%s", r)
	}
}

func TestFlippedByteIsDroppedAndRefetched(t *testing.T) {
	e := NewEnv(t)
	e.MustOK("refresh")
	stopAndWait(t, e)
	store, _, p := cacheOf(t, e)
	h := demoHash(t)
	var ref cache.Ref
	b, err := os.ReadFile(filepath.Join(p.Schemas(), string(h)+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	path := store.Path(ref.Digest)
	blob, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	blob[len(blob)/2] ^= 0x20
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, blob, 0o644); err != nil {
		t.Fatal(err)
	}

	// ls still answers; the corrupt snapshot is not served but dropped.
	if n := namespace(t, e, "demo"); n.State != api.StateUnread {
		t.Fatalf("corrupt snapshot served: %+v", n)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("corrupt blob still in the store: %v", err)
	}
	e.MustOK("refresh", "demo")
	if n := namespace(t, e, "demo"); n.State != api.StateCached || n.Tools == 0 {
		t.Fatalf("after refetch: %+v", n)
	}
}

func TestImageResultGoesToTheStore(t *testing.T) {
	e := NewEnv(t)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {"everything": {"command": %s}}}`,
		jsonString(npmBin(t, "mcp-server-everything"))))
	var resp api.CallResponse
	e.JSON(&resp, "call", "everything.get-tiny-image")
	if len(resp.Blobs) != 1 || resp.Blobs[0].MimeType != "image/png" {
		t.Fatalf("blobs: %+v", resp.Blobs)
	}
	bl := resp.Blobs[0]
	img, err := os.ReadFile(bl.Path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(img)
	if hex.EncodeToString(sum[:]) != strings.TrimPrefix(bl.Digest, "sha256:") || int64(len(img)) != bl.Size {
		t.Fatalf("blob %+v does not match the %d bytes at its path", bl, len(img))
	}
	// The right bytes: exactly the image the server sends (its source
	// holds it as base64; the image's own zlib checksum is off, so it is
	// compared byte for byte rather than decoded).
	if want := everythingTinyImage(t); !bytes.Equal(img, want) {
		t.Fatalf("stored %d bytes, the server sends %d other bytes", len(img), len(want))
	}
	if !bytes.HasPrefix(img, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatal("stored image lacks the PNG signature")
	}
	if strings.Contains(string(resp.Result), `"data"`) {
		t.Fatalf("result still carries base64 data: %s", resp.Result)
	}

	// Text output names the path, type and size instead of dumping base64.
	r := e.MustOK("call", "everything.get-tiny-image")
	if !strings.Contains(r.Stdout, bl.Path) || !strings.Contains(r.Stdout, "image/png") || len(r.Stdout) > 2000 {
		t.Fatalf("text output:\n%s", r)
	}

	out := filepath.Join(e.Root, "saved")
	e.MustOK("call", "--save", out, "everything.get-tiny-image")
	ents, err := os.ReadDir(out)
	if err != nil || len(ents) != 1 || !strings.HasSuffix(ents[0].Name(), ".png") {
		t.Fatalf("--save wrote %v (%v)", ents, err)
	}
	saved, _ := os.ReadFile(filepath.Join(out, ents[0].Name()))
	if !bytes.Equal(saved, img) {
		t.Fatal("--save wrote other bytes than the stored blob")
	}
}

func TestPolicyReadOnlyDenyAllow(t *testing.T) {
	e := NewEnv(t)
	fx := jsonString(fixtureBin)
	e.WriteFile(filepath.Join(e.Work, ".mcp.json"), fmt.Sprintf(`{"mcpServers": {
  "ask": {"command": %s},
  "deny": {"command": %s, "mcpx": {"policy": {"destructive": "deny"}}},
  "allow": {"command": %s, "mcpx": {"policy": {"destructive": "allow"}}}
}}`, fx, fx, fx))
	// readOnlyHint tools are never asked about (no terminal, no --yes).
	if r := e.MustOK("call", "ask.echo", "text=ro"); r.Stdout != "ro" {
		t.Fatalf("read-only tool:\n%s", r)
	}
	if r := e.Mcpx("call", "ask.delete_note", "name=n"); r.Code != 4 {
		t.Fatalf("confirm without --yes:\n%s", r)
	}
	if r := e.Mcpx("call", "--yes", "deny.delete_note", "name=n"); r.Code != 4 || !strings.Contains(r.Stderr, "deny") {
		t.Fatalf("deny with --yes must still refuse:\n%s", r)
	}
	if r := e.MustOK("call", "allow.delete_note", "name=n"); r.Stdout != "deleted n" {
		t.Fatalf("allow never asks:\n%s", r)
	}
}

// everythingTinyImage is the PNG server-everything's get-tiny-image returns,
// read from the pinned package's source.
func everythingTinyImage(t *testing.T) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(repoRoot, "tests", "npm", "node_modules", "@modelcontextprotocol",
		"server-everything", "dist", "tools", "get-tiny-image.js"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`MCP_TINY_IMAGE = "([A-Za-z0-9+/=]+)"`).FindSubmatch(src)
	if m == nil {
		t.Fatal("MCP_TINY_IMAGE not found in server-everything's source")
	}
	b, err := base64.StdEncoding.DecodeString(string(m[1]))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
