package cache

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/config"
)

func newSchemas(t *testing.T) (*Schemas, *Store, string) {
	t.Helper()
	s, _ := newStore(t)
	dir := filepath.Join(filepath.Dir(s.Dir()), "schemas")
	return NewSchemas(s, dir), s, dir
}

func TestSchemasSaveLoadInvalidate(t *testing.T) {
	c, s, dir := newSchemas(t)
	h := config.ServerHash("0123456789abcdef")
	var miss *MissError
	if _, err := c.Load(h); !errors.As(err, &miss) || miss.Reason != ReasonNoSnapshot {
		t.Fatalf("Load before Save = %v, want no snapshot", err)
	}
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	tool := json.RawMessage(`{"name":"rm","anyOf":[{"required":["a"]}],"annotations":{"destructiveHint":true}}`)
	if err := c.Save(&Snapshot{ServerHash: h, FetchedAt: &at, ProtocolVersion: "2025-06-18", Tools: []json.RawMessage{tool}}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Load(h)
	if err != nil {
		t.Fatal(err)
	}
	if got.Format != SnapshotFormat() || !got.FetchedAt.Equal(at) || string(got.Tools[0]) != string(tool) {
		t.Fatalf("Load = %+v, want the saved snapshot with its raw tool", got)
	}
	var ref Ref
	b, _ := os.ReadFile(filepath.Join(dir, string(h)+".json"))
	if err := json.Unmarshal(b, &ref); err != nil || ref.ServerHash != h || ref.Format != SnapshotFormat() || !s.Has(ref.Digest) {
		t.Fatalf("ref %s does not name the snapshot", b)
	}
	roots, _ := c.Roots()
	if !reflect.DeepEqual(roots, map[Digest][]string{ref.Digest: {"schemas/" + string(h) + ".json"}}) {
		t.Fatalf("Roots = %v", roots)
	}
	if err := c.Invalidate(h); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(h); !errors.As(err, &miss) || miss.Reason != ReasonNoSnapshot {
		t.Fatalf("Load after Invalidate = %v, want no snapshot", err)
	}
	if err := c.Invalidate(h); err != nil {
		t.Fatalf("second Invalidate: %v", err)
	}
}

func TestSchemasFailedFetch(t *testing.T) {
	c, _, _ := newSchemas(t)
	h := config.ServerHash("1111111111111111")
	at := time.Now()
	if err := c.Save(&Snapshot{ServerHash: h, FetchedAt: &at, Error: "spawn npx: not found"}); err != nil {
		t.Fatal(err)
	}
	got, err := c.Load(h)
	if err != nil {
		t.Fatal(err)
	}
	if got.Error != "spawn npx: not found" || got.FetchedAt != nil {
		t.Fatalf("failed fetch loaded as %+v, want its error and no timestamp", got)
	}
}

// oldSnapshot is a Snapshot from before tools carried annotations: the same
// document with tools decoded into a struct that has no annotations field.
type oldSnapshot struct {
	Format     string            `json:"format"`
	ServerHash config.ServerHash `json:"serverHash"`
	FetchedAt  *time.Time        `json:"fetchedAt,omitempty"`
	Tools      []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	} `json:"tools"`
}

func TestSnapshotOfAnotherFormatIsNotServed(t *testing.T) {
	c, s, dir := newSchemas(t)
	h := config.ServerHash("2222222222222222")
	oldFormat := FormatOf(reflect.TypeFor[oldSnapshot]())
	if oldFormat == SnapshotFormat() {
		t.Fatalf("old and current snapshot types have one format")
	}
	old := oldSnapshot{Format: oldFormat, ServerHash: h}
	old.Tools = append(old.Tools, struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}{Name: "rm", InputSchema: json.RawMessage(`{"type":"object"}`)})
	blob, _ := json.Marshal(old)
	d := put(t, s, string(blob))
	writeRef := func(format string) {
		b, _ := json.Marshal(Ref{ServerHash: h, Digest: d, Format: format, SavedAt: time.Now()})
		if err := writeFileAtomic(dir, string(h)+".json", b); err != nil {
			t.Fatal(err)
		}
	}
	writeRef(oldFormat)
	var miss *MissError
	snap, err := c.Load(h)
	if !errors.As(err, &miss) || miss.Reason != ReasonFormat || snap != nil {
		t.Fatalf("Load(old format) = %+v, %v; want MissError format", snap, err)
	}
	// A ref that claims the current format does not make an old blob usable.
	writeRef(SnapshotFormat())
	_, err = c.Load(h)
	if !errors.As(err, &miss) || miss.Reason != ReasonFormat {
		t.Fatalf("Load(old blob, current ref) = %v; want MissError format", err)
	}
	if !strings.Contains(err.Error(), string(h)) {
		t.Errorf("error %q should name the server", err)
	}
}

func TestCorruptSnapshotDropsRef(t *testing.T) {
	c, s, dir := newSchemas(t)
	h := config.ServerHash("3333333333333333")
	if err := c.Save(&Snapshot{ServerHash: h, Tools: []json.RawMessage{json.RawMessage(`{"name":"x"}`)}}); err != nil {
		t.Fatal(err)
	}
	var ref Ref
	b, _ := os.ReadFile(filepath.Join(dir, string(h)+".json"))
	_ = json.Unmarshal(b, &ref)
	flip(t, s, ref.Digest)
	var miss *MissError
	if _, err := c.Load(h); !errors.As(err, &miss) || miss.Reason != ReasonDigestMismatch {
		t.Fatalf("Load(corrupt) = %v, want MissError digest mismatch", err)
	}
	if _, err := os.Stat(filepath.Join(dir, string(h)+".json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ref to a corrupt snapshot was kept")
	}
	if s.Has(ref.Digest) {
		t.Fatalf("corrupt snapshot blob was kept")
	}
	if _, err := c.Load(h); !errors.As(err, &miss) || miss.Reason != ReasonNoSnapshot {
		t.Fatalf("Load after drop = %v, want no snapshot", err)
	}
}

// Load reuses what it decoded while the ref is unchanged, but never past a
// new ref (this process's Save or another process's), a removed ref, or
// touchEvery, after which the blob is read and its digest checked again.
func TestLoadReusesOnlyAnUnchangedRef(t *testing.T) {
	c, s, dir := newSchemas(t)
	now := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	s.Now = func() time.Time { return now }
	h := config.ServerHash("4444444444444444")
	save := func(name string) {
		t.Helper()
		if err := c.Save(&Snapshot{ServerHash: h, Tools: []json.RawMessage{json.RawMessage(`{"name":"` + name + `"}`)}}); err != nil {
			t.Fatal(err)
		}
	}
	tool := func() string {
		t.Helper()
		snap, err := c.Load(h)
		if err != nil {
			t.Fatal(err)
		}
		return string(snap.Tools[0])
	}
	save("a")
	first, _ := c.Load(h)
	if again, _ := c.Load(h); again != first {
		t.Fatal("an unchanged ref was decoded again")
	}
	save("b")
	if got := tool(); got != `{"name":"b"}` {
		t.Fatalf("after Save: %s", got)
	}

	// Another process points the ref at another snapshot.
	other := NewSchemas(s, dir)
	if err := other.Save(&Snapshot{ServerHash: h, Tools: []json.RawMessage{json.RawMessage(`{"name":"c"}`)}}); err != nil {
		t.Fatal(err)
	}
	if got := tool(); got != `{"name":"c"}` {
		t.Fatalf("after another process's Save: %s", got)
	}

	// A corrupted blob behind an unchanged ref: served from memory (it was
	// verified when read) until touchEvery passes, then detected.
	var ref Ref
	b, _ := os.ReadFile(filepath.Join(dir, string(h)+".json"))
	_ = json.Unmarshal(b, &ref)
	flip(t, s, ref.Digest)
	if got := tool(); got != `{"name":"c"}` {
		t.Fatalf("within touchEvery: %s", got)
	}
	now = now.Add(touchEvery)
	var miss *MissError
	if _, err := c.Load(h); !errors.As(err, &miss) || miss.Reason != ReasonDigestMismatch {
		t.Fatalf("after touchEvery: %v, want the digest mismatch", err)
	}

	// Another process invalidates: the next Load misses.
	save("d")
	_ = tool()
	if err := other.Invalidate(h); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Load(h); !errors.As(err, &miss) || miss.Reason != ReasonNoSnapshot {
		t.Fatalf("after another process's Invalidate: %v", err)
	}
}

// snapshotBeforeTemplates is Snapshot as it was before resource templates
// were cached: a snapshot it wrote lists resources but no templates, and
// must be refetched rather than read as "this server has no templates".
type snapshotBeforeTemplates struct {
	Format          string            `json:"format"`
	ServerHash      config.ServerHash `json:"serverHash"`
	FetchedAt       *time.Time        `json:"fetchedAt,omitempty"`
	Error           string            `json:"error,omitempty"`
	ProtocolVersion string            `json:"protocolVersion,omitempty"`
	ServerInfo      json.RawMessage   `json:"serverInfo,omitempty"`
	Instructions    string            `json:"instructions,omitempty"`
	Tools           []json.RawMessage `json:"tools"`
	Prompts         []json.RawMessage `json:"prompts,omitempty"`
	Resources       []json.RawMessage `json:"resources,omitempty"`
}

func TestSnapshotWithoutTemplatesIsNotServed(t *testing.T) {
	c, s, dir := newSchemas(t)
	h := config.ServerHash("4444444444444444")
	format := FormatOf(reflect.TypeFor[snapshotBeforeTemplates]())
	if format == SnapshotFormat() {
		t.Fatal("adding resourceTemplates did not change the snapshot format")
	}
	now := time.Now().UTC()
	blob, _ := json.Marshal(snapshotBeforeTemplates{Format: format, ServerHash: h, FetchedAt: &now,
		Tools: []json.RawMessage{}, Resources: []json.RawMessage{json.RawMessage(`{"uri":"demo://a","name":"a"}`)}})
	d := put(t, s, string(blob))
	b, _ := json.Marshal(Ref{ServerHash: h, Digest: d, Format: format, SavedAt: now})
	if err := writeFileAtomic(dir, string(h)+".json", b); err != nil {
		t.Fatal(err)
	}
	var miss *MissError
	if snap, err := c.Load(h); !errors.As(err, &miss) || miss.Reason != ReasonFormat || snap != nil {
		t.Fatalf("Load(snapshot without templates) = %+v, %v; want MissError format", snap, err)
	}
}

// A snapshot is stale once its ttlMs has passed since FetchedAt; without a
// hint, or for a failed fetch, never.
func TestSnapshotStale(t *testing.T) {
	at := time.Date(2026, 7, 28, 9, 0, 0, 0, time.UTC)
	ttl, zero := int64(60_000), int64(0)
	for _, c := range []struct {
		snap *Snapshot
		now  time.Time
		want bool
	}{
		{&Snapshot{FetchedAt: &at, TTLMs: &ttl}, at.Add(59 * time.Second), false},
		{&Snapshot{FetchedAt: &at, TTLMs: &ttl}, at.Add(60 * time.Second), true},
		{&Snapshot{FetchedAt: &at, TTLMs: &zero}, at, true},
		{&Snapshot{FetchedAt: &at}, at.Add(1000 * time.Hour), false},
		{&Snapshot{Error: "boom", TTLMs: &zero}, at, false},
		{nil, at, false},
	} {
		if got := c.snap.Stale(c.now); got != c.want {
			t.Errorf("Stale(%+v, %s) = %v, want %v", c.snap, c.now.Sub(at), got, c.want)
		}
	}
}

// With Watch, Load trusts its memo without a stat until the refs
// directory reports a change, by this process or another; a change is
// seen once the watch has read its event, and a directory that goes away
// ends the watch (Load stats again).
func TestWatchedLoadSeesOtherProcesses(t *testing.T) {
	c, s, dir := newSchemas(t)
	if err := c.Watch(); err != nil {
		t.Skip(err)
	}
	h := config.ServerHash("5555555555555555")
	tool := func() string {
		t.Helper()
		snap, err := c.Load(h)
		if err != nil {
			t.Fatal(err)
		}
		return string(snap.Tools[0])
	}
	// settled waits until the watch has read every event so far: a
	// file of its own creates one more, and the generation moves.
	settled := func() {
		t.Helper()
		before := c.gen.Load()
		probe := filepath.Join(dir, ".probe")
		if err := os.WriteFile(probe, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		os.Remove(probe)
		deadline := time.Now().Add(10 * time.Second)
		for c.gen.Load() == before {
			if time.Now().After(deadline) {
				t.Fatal("the watch reported nothing")
			}
			time.Sleep(time.Millisecond)
		}
	}
	if err := c.Save(&Snapshot{ServerHash: h, Tools: []json.RawMessage{json.RawMessage(`{"name":"a"}`)}}); err != nil {
		t.Fatal(err)
	}
	// A batch of the Save's events may still be read after settled
	// returned (the watch reads what is queued when it wakes), moving the
	// generation once more: the memo is trusted when nothing moved it
	// between two loads, which one of a few tries sees.
	fromMemory := false
	for try := 0; try < 5 && !fromMemory; try++ {
		settled()
		first, _ := c.Load(h)
		c.mu.Lock()
		m := c.memo[h]
		c.mu.Unlock()
		again, _ := c.Load(h)
		fromMemory = again == first && m.gen == c.gen.Load() && c.watching.Load()
	}
	if !fromMemory {
		t.Fatal("an unchanged, watched ref was not served from memory")
	}

	other := NewSchemas(s, dir)
	if err := other.Save(&Snapshot{ServerHash: h, Tools: []json.RawMessage{json.RawMessage(`{"name":"b"}`)}}); err != nil {
		t.Fatal(err)
	}
	settled()
	if got := tool(); got != `{"name":"b"}` {
		t.Fatalf("after another process's Save: %s", got)
	}
	if err := other.Invalidate(h); err != nil {
		t.Fatal(err)
	}
	settled()
	var miss *MissError
	if _, err := c.Load(h); !errors.As(err, &miss) || miss.Reason != ReasonNoSnapshot {
		t.Fatalf("after another process's Invalidate: %v", err)
	}
	// A server with no ref is remembered too (a daemon with hundreds of
	// servers never read would stat each ref on every `ls`), until the
	// watch sees a ref appear.
	c.mu.Lock()
	m := c.memo[h]
	c.mu.Unlock()
	if m.miss == nil || m.snap != nil {
		t.Fatalf("a missing ref is not remembered: %+v", m)
	}

	if err := other.Save(&Snapshot{ServerHash: h, Tools: []json.RawMessage{json.RawMessage(`{"name":"c"}`)}}); err != nil {
		t.Fatal(err)
	}
	settled()
	if got := tool(); got != `{"name":"c"}` {
		t.Fatalf("after another process's Save of a server it had no ref of: %s", got)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for c.watching.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the watch outlived its directory")
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := c.Load(h); !errors.As(err, &miss) || miss.Reason != ReasonNoSnapshot {
		t.Fatalf("after the refs directory went away: %v", err)
	}
}

// Changed fires after another process's Save, and keeps one wake-up
// pending however many changes came; without a watch it never fires.
func TestChangedFiresOnRefChanges(t *testing.T) {
	c, s, dir := newSchemas(t)
	select {
	case <-c.Changed():
		t.Fatal("Changed fired without a watch")
	default:
	}
	if err := c.Watch(); err != nil {
		t.Skip(err)
	}
	if !c.Watching() {
		t.Fatal("Watching is false after Watch")
	}
	other := NewSchemas(s, dir)
	h := config.ServerHash("6666666666666666")
	wait := func(what string) {
		t.Helper()
		select {
		case <-c.Changed():
		case <-time.After(10 * time.Second):
			t.Fatalf("no wake-up after %s", what)
		}
	}
	for i := 0; i < 3; i++ { // three saves, one pending wake-up at least
		if err := other.Save(&Snapshot{ServerHash: h, Tools: []json.RawMessage{json.RawMessage(fmt.Sprintf(`{"name":"t%d"}`, i))}}); err != nil {
			t.Fatal(err)
		}
	}
	wait("saves")
	if len(c.changed) > 1 {
		t.Fatalf("%d wake-ups pending", len(c.changed))
	}
}

// A server hash names a file in the refs directory: nothing that leaves
// it, hides it or reads as a flag.
func TestValidHash(t *testing.T) {
	for h, want := range map[config.ServerHash]bool{
		"57855c1758b5d81d": true, "abc-def": true,
		"": false, "-rf": false, "a/b": false, `a\b`: false, "..": false, "a.json": false,
	} {
		if got := validHash(h); got != want {
			t.Errorf("validHash(%q) = %v, want %v", h, got, want)
		}
	}
}
