package daemon

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"log"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
)

func TestPolicyCheckByAnnotations(t *testing.T) {
	confirm := effectivePolicy(config.Policy{})
	strict := effectivePolicy(config.Policy{Unannotated: config.PolicyConfirm})
	deny := effectivePolicy(config.Policy{Destructive: config.PolicyDeny})
	allow := effectivePolicy(config.Policy{Destructive: config.PolicyAllow})
	const (
		runs    = 0
		asks    = http.StatusConflict
		refused = http.StatusForbidden
	)
	for _, c := range []struct {
		annotations                  string // "" = none at all
		confirm, strict, deny, allow int
	}{
		{``, runs, asks, runs, runs},
		{`null`, runs, asks, runs, runs},
		{`{}`, runs, asks, runs, runs}, // mcp-go's unannotated tool
		{`{"title":"T","idempotentHint":true}`, runs, asks, runs, runs},
		// The spec's default for a tool that is not read-only is
		// destructive: saying only readOnlyHint false leaves it unannotated.
		{`{"readOnlyHint":false}`, runs, asks, runs, runs},
		{`{"readOnlyHint":true}`, runs, runs, runs, runs},
		{`{"readOnlyHint":true,"destructiveHint":true}`, runs, runs, runs, runs},
		{`{"destructiveHint":false}`, runs, runs, runs, runs},
		{`{"destructiveHint":true}`, asks, asks, refused, runs},
		{`{"readOnlyHint":false,"destructiveHint":true}`, asks, asks, refused, runs},
		// Annotations that do not decode fail closed.
		{`{"destructiveHint":"false"}`, asks, asks, refused, runs},
		{`{"readOnlyHint":"true"}`, asks, asks, refused, runs},
		{`[]`, asks, asks, refused, runs},
		{`"readOnly"`, asks, asks, refused, runs},
		// Keys are exact: a case variant or a duplicate is malformed, never
		// the "read-only" that encoding/json's case folding would read.
		{`{"destructiveHint":true,"ReadOnlyHint":true}`, asks, asks, refused, runs},
		{`{"readonlyhint":true}`, asks, asks, refused, runs},
		{`{"readOnlyHint":false,"readOnlyHint":true}`, asks, asks, refused, runs},
		{`{"destructiveHint":true,"destructiveHint":false}`, asks, asks, refused, runs},
		{`{"DestructiveHint":false}`, asks, asks, refused, runs},
		{`{"readOnlyHint":null,"destructiveHint":null}`, runs, asks, runs, runs},
		// A second, case-variant "annotations" key at the tool's top level.
		{`{"destructiveHint":true},"Annotations":{"readOnlyHint":true}`, asks, asks, refused, runs},
		{`{"destructiveHint":true},"annotations":{"readOnlyHint":true}`, asks, asks, refused, runs},
	} {
		raw := `{"name":"t"}`
		if c.annotations != "" {
			raw = `{"name":"t","annotations":` + c.annotations + `}`
		}
		tool, ok := toolOf("ns", json.RawMessage(raw))
		if !ok {
			t.Fatalf("toolOf(%s) failed", raw)
		}
		for _, p := range []struct {
			name string
			pol  policy
			want int
		}{{"confirm", confirm, c.confirm}, {"strict", strict, c.strict}, {"deny", deny, c.deny}, {"allow", allow, c.allow}} {
			got := runs
			if err := p.pol.check("ns", tool.Name, hintOf(tool), false); err != nil {
				var he *httpError
				if !errors.As(err, &he) {
					t.Fatalf("%s: %v is not an httpError", c.annotations, err)
				}
				got = he.status
			}
			if got != p.want {
				t.Errorf("annotations %s under %s: status %d, want %d", c.annotations, p.name, got, p.want)
			}
			if got == asks {
				if err := p.pol.check("ns", tool.Name, hintOf(tool), true); err != nil {
					t.Errorf("annotations %s under %s, confirmed: %v", c.annotations, p.name, err)
				}
			}
		}
	}
}

func TestPolicyCodes(t *testing.T) {
	tool := api.Tool{Name: "rm", Annotations: json.RawMessage(`{"destructiveHint":true}`)}
	var he *httpError
	if err := effectivePolicy(config.Policy{}).check("ns", tool.Name, hintOf(tool), false); !errors.As(err, &he) ||
		he.body.Code != api.CodeConfirmation || he.body.Namespace != "ns" || he.body.Tool != "rm" {
		t.Errorf("confirm: %v", err)
	}
	if err := effectivePolicy(config.Policy{Destructive: config.PolicyDeny}).check("ns", tool.Name, hintOf(tool), true); !errors.As(err, &he) ||
		he.body.Code != api.CodePolicyDenied {
		t.Errorf("deny: %v", err)
	}
}

// saveSnapshot writes a snapshot for ns as if an earlier fetch had made it.
func (d *testDaemon) saveSnapshot(ns string, snap *cache.Snapshot) {
	d.t.Helper()
	store, err := cache.OpenStore(d.w.paths.CAS())
	if err != nil {
		d.t.Fatal(err)
	}
	snap.ServerHash = config.ServerHash(d.namespaces()[ns].ServerHash)
	if err := cache.NewSchemas(store, d.w.paths.Schemas()).Save(snap); err != nil {
		d.t.Fatal(err)
	}
}

func TestStaleSnapshotIsReadAgainForAMissingTool(t *testing.T) {
	_, d, _ := startFixture(t)
	// A snapshot from before the server had delete_note.
	now := time.Now().UTC()
	d.saveSnapshot("fx", &cache.Snapshot{FetchedAt: &now, Tools: []json.RawMessage{
		json.RawMessage(`{"name":"echo","annotations":{"readOnlyHint":true},"inputSchema":{"type":"object"}}`),
	}})
	if ns := d.namespaces()["fx"]; ns.State != api.StateCached || ns.Tools != 1 {
		t.Fatalf("fx with the old snapshot: %+v", ns)
	}
	// The fresh list has delete_note, destructive: asked, not "no such tool".
	code, _, e := d.call("fx", "delete_note", `{"name":"n"}`, false)
	if code != http.StatusConflict || e.Code != api.CodeConfirmation {
		t.Fatalf("delete_note missing from the old snapshot: %d %+v", code, e)
	}
	if ns := d.namespaces()["fx"]; ns.Tools <= 1 {
		t.Errorf("snapshot not replaced by the fresh list: %+v", ns)
	}
	if _, _, e := d.call("fx", "delete_note", `{"name":"n"}`, true); e != nil {
		t.Errorf("confirmed: %+v", e)
	}
	// A tool that is in no list is still unknown.
	code, _, e = d.call("fx", "delete_notes", `{}`, true)
	if code != http.StatusNotFound || e.Code != api.CodeUnknownTool || e.Suggestion != "delete_note" {
		t.Errorf("unknown tool: %d %+v", code, e)
	}
}

func TestCallAfterFailedListingRefetchesInBackground(t *testing.T) {
	w := newWorld(t, `{"mcpServers": {"a": {"command": "@FIXTURE@", "mcpx": {"policy": {"destructive": "allow"}}}}}`)
	d := w.start()
	// The last listing failed (say, a slow start); the policy needs no
	// annotations, so calls go through, and the list is read again.
	d.saveSnapshot("a", &cache.Snapshot{Error: "timed out", Tools: []json.RawMessage{}})
	if ns := d.namespaces()["a"]; ns.State != api.StateError {
		t.Fatalf("a before the call: %+v", ns)
	}
	if _, _, e := d.call("a", "echo", `{"text":"x"}`, false); e != nil {
		t.Fatal(e)
	}
	eventually(t, "a's tools to be read again", func() bool { return d.namespaces()["a"].State == api.StateCached })
}

func TestExtractBlobs(t *testing.T) {
	store, err := cache.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	d := &daemon{store: store, log: log.New(logs, "", 0)}
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG fake"))
	raw := `{"content":[` +
		`{"type":"text","text":"hi","_mcpx":{"blob":1}},` + // spoofed marker
		`{"type":"image","data":"` + png + `","mimeType":"image/png"},` +
		`{"type":"image","data":"***not base64***","mimeType":"image/png"},` +
		`{"type":"resource","resource":{"uri":"file:///x/report.pdf","blob":"` + png + `","mimeType":"application/pdf"}}` +
		`],"isError":false}`
	resp, err := d.extractBlobs("ns", "tool", json.RawMessage(raw))
	if err != nil {
		t.Fatalf("extractBlobs: %v", err)
	}
	var res struct {
		Content []map[string]json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(resp.Result, &res); err != nil || len(res.Content) != 4 {
		t.Fatalf("result %s: %v", resp.Result, err)
	}
	if _, ok := res.Content[0]["_mcpx"]; ok {
		t.Errorf("a server's own _mcpx marker survived: %s", resp.Result)
	}
	if string(res.Content[1]["_mcpx"]) != `{"blob":1}` || res.Content[1]["data"] != nil {
		t.Errorf("image not replaced by the marker: %s", resp.Result)
	}
	// Undecodable data stays inline: the tool ran; its result is not lost.
	if res.Content[2]["_mcpx"] != nil || string(res.Content[2]["data"]) != `"***not base64***"` {
		t.Errorf("bad base64 item: %s", resp.Result)
	}
	if !strings.Contains(logs.String(), "content 2") {
		t.Errorf("bad base64 not logged: %q", logs.String())
	}
	if string(res.Content[3]["_mcpx"]) != `{"blob":3}` || strings.Contains(string(res.Content[3]["resource"]), `"blob"`) {
		t.Errorf("resource blob not replaced: %s", resp.Result)
	}
	if len(resp.Blobs) != 2 || resp.Blobs[0].Index != 1 || resp.Blobs[1].Index != 3 || resp.Blobs[1].Name != "report.pdf" {
		t.Fatalf("blobs = %+v", resp.Blobs)
	}
	entries, err := store.List()
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Leases == 0 {
			t.Errorf("blob %s handed out without a lease", e.Digest)
		}
	}
	if len(entries) != 1 { // both blobs hold the same bytes
		t.Errorf("entries = %+v", entries)
	}
}

func TestPlainResultPassesThrough(t *testing.T) {
	for _, c := range []struct {
		raw         string
		isError, ok bool
	}{
		{`{"content":[{"type":"text","text":"hi"}]}`, false, true},
		{`{"content":[{"type":"text","text":"no"}],"isError":true}`, true, true},
		{`{"isError":"yes","content":[]}`, false, true},
		{`{"content":[{"type":"image","data":"aGk=","mimeType":"image/png"}]}`, false, false},
		{`{"content":[{"type":"resource","resource":{"uri":"x","blob":"aGk="}}]}`, false, false},
		{`{"content":[],"_mcpx":{"blob":0}}`, false, false},
		{`{"content":[{"type":"image","\u0064ata":"aGk="}]}`, false, false},
		{`[1]`, false, false},
	} {
		isErr, ok := plainResult(json.RawMessage(c.raw))
		if isErr != c.isError || ok != c.ok {
			t.Errorf("plainResult(%s) = %v, %v; want %v, %v", c.raw, isErr, ok, c.isError, c.ok)
		}
	}
}

// A tool the server's filter hides is refused with 403 tool_hidden naming
// the filter and its file, never reported as unknown.
func TestHiddenToolAnswer(t *testing.T) {
	s := &config.Server{Name: "ws", Host: "windsurf", Source: "/home/u/.codeium/windsurf/mcp_config.json",
		Options: config.Options{ExcludeTools: []string{"delete_*", "drop"}}}
	for tool, want := range map[string]string{
		"delete_repo": `ws.delete_repo is hidden by "disabledTools" in /home/u/.codeium/windsurf/mcp_config.json (it matches "delete_*")`,
		"drop":        `ws.drop is hidden by "disabledTools" in /home/u/.codeium/windsurf/mcp_config.json; remove it from that list`,
	} {
		e := hiddenTool(s, tool)
		if e == nil || e.status != http.StatusForbidden || e.body.Code != api.CodeToolHidden || !strings.Contains(e.body.Error, want) ||
			e.body.Namespace != "ws" || e.body.Tool != tool {
			t.Errorf("hiddenTool(%s) = %+v; want 403 %q", tool, e, want)
		}
	}
	if e := hiddenTool(s, "list"); e != nil {
		t.Errorf("an allowed tool is hidden: %+v", e)
	}
	own := &config.Server{Name: "own", Host: "claude-code", Source: "/p/.mcp.json", Options: config.Options{Tools: []string{"read"}}}
	if e := hiddenTool(own, "write"); e == nil || !strings.Contains(e.body.Error, `own.write is hidden: "mcpx.tools" in /p/.mcp.json does not list it`) {
		t.Errorf("hiddenTool(own.write) = %+v", e)
	}
}
