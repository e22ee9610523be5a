package daemon

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/fixture"
)

// fixtureConfig has the fixture behind a wrapper that records each start
// in started, plus namespaces with other policies (each with its own env so
// each is its own server definition).
func fixtureConfig(started string) string {
	return `{
  // JSONC: comments are fine
  "mcpServers": {
    "fx": {"command": "/bin/sh", "args": ["-c", "echo started >> ` + started + `; exec @FIXTURE@"]},
    "deny": {"command": "@FIXTURE@", "env": {"NS": "deny"}, "mcpx": {"policy": {"destructive": "deny"}}},
    "strict": {"command": "@FIXTURE@", "env": {"NS": "strict"}, "mcpx": {"policy": {"unannotated": "confirm"}}},
    "broken": {"command": "@FIXTURE@", "env": {"FIXTURE_FAIL_START": "boom: no database"}},
    "nolist": {"command": "@FIXTURE@", "env": {"FIXTURE_LIST_FAIL": "listing is switched off"}},
    "lenient": {"command": "@FIXTURE@", "env": {"FIXTURE_FAIL_START": "boom: lenient"},
                "mcpx": {"policy": {"destructive": "allow"}}}
  }
}`
}

func startFixture(t *testing.T) (*world, *testDaemon, string) {
	w := newWorld(t, "")
	started := filepath.Join(w.root, "started")
	w.writeConfig(fixtureConfig(started))
	return w, w.start(), started
}

func TestHealth(t *testing.T) {
	_, d, _ := startFixture(t)
	var h api.Health
	d.mustOK(http.MethodGet, api.PathHealth, nil, &h)
	if !h.OK || h.DaemonKey != string(d.key) || h.Pid != os.Getpid() || h.Version == "" {
		t.Errorf("health = %+v", h)
	}
}

func TestDiscoveryNeverStartsServers(t *testing.T) {
	_, d, started := startFixture(t)
	nss := d.namespaces()
	if len(nss) != 6 {
		t.Fatalf("namespaces = %v", nss)
	}
	for name, ns := range nss {
		if ns.State != api.StateUnread || ns.Tools != 0 || ns.Live != 0 {
			t.Errorf("%s before refresh: %+v", name, ns)
		}
	}
	var sr api.SearchResponse
	d.mustOK(http.MethodGet, api.PathSearch+"?q=echo", nil, &sr)
	if len(sr.Results) != 0 {
		t.Errorf("search before refresh: %+v", sr)
	}
	if _, err := os.Stat(started); !os.IsNotExist(err) {
		t.Errorf("a broad discovery request started the server (marker: %v)", err)
	}
	// Naming a never-read namespace reads it, so it never looks empty.
	var tr api.ToolsResponse
	d.mustOK(http.MethodGet, api.PathTools+"?ns=fx", nil, &tr)
	if tr.Namespace.State != api.StateCached || len(tr.Tools) == 0 {
		t.Errorf("tools of a named, never-read namespace: %+v", tr.Namespace)
	}
	if _, err := os.Stat(started); err != nil {
		t.Errorf("naming the namespace did not read the server: %v", err)
	}
}

func TestRefreshThenToolsAreLossless(t *testing.T) {
	_, d, _ := startFixture(t)
	var rr api.RefreshResponse
	d.mustOK(http.MethodPost, api.PathRefresh, api.RefreshRequest{Namespace: "fx"}, &rr)
	if len(rr.Namespaces) != 1 || rr.Namespaces[0].State != api.StateCached || rr.Namespaces[0].Tools == 0 || rr.Namespaces[0].FetchedAt == nil {
		t.Fatalf("refresh = %+v", rr)
	}

	var tr api.ToolsResponse
	d.mustOK(http.MethodGet, api.PathTools+"?ns=fx", nil, &tr)
	if tr.Namespace.State != api.StateCached || len(tr.Tools) != rr.Namespaces[0].Tools {
		t.Fatalf("tools: %+v", tr.Namespace)
	}

	var sr api.ToolsResponse
	d.mustOK(http.MethodGet, api.PathSchema+"?ns=fx&tool=anyof", nil, &sr)
	if len(sr.Tools) != 1 || sr.Tools[0].Name != "anyof" {
		t.Fatalf("schema anyof: %+v", sr.Tools)
	}
	var def struct {
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(sr.Tools[0].Definition, &def); err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(t, def.InputSchema, []byte(fixture.AnyOfSchema)) {
		t.Errorf("anyof inputSchema not lossless:\n got %s\nwant %s", def.InputSchema, fixture.AnyOfSchema)
	}
	if sr.Tools[0].Annotations == nil || !strings.Contains(sr.Tools[0].Description, "anyOf") {
		t.Errorf("anyof tool fields: %+v", sr.Tools[0])
	}

	code, e := d.do(http.MethodGet, api.PathSchema+"?ns=fx&tool=anyoff", nil, nil)
	if code != http.StatusNotFound || e.Code != api.CodeUnknownTool || e.Suggestion != "anyof" {
		t.Errorf("unknown tool: %d %+v", code, e)
	}

	// A failed fetch records its error, no timestamp.
	var br api.RefreshResponse
	d.mustOK(http.MethodPost, api.PathRefresh, api.RefreshRequest{Namespace: "broken"}, &br)
	if ns := br.Namespaces[0]; ns.State != api.StateError || !strings.Contains(ns.Error+ns.Stderr, "boom") || ns.FetchedAt != nil {
		t.Errorf("broken after refresh: %+v", ns)
	}
	// Clients quote the server's stderr apart from mcpx's words.
	if summary, tail := br.Namespaces[0].Error, br.Namespaces[0].Stderr; strings.Contains(summary, "boom") || !strings.Contains(tail, "boom: no database") {
		t.Errorf("broken's error split into %q and stderr %q", summary, tail)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return string(xb) == string(yb)
}

func TestSearchRankingLive(t *testing.T) {
	_, d, _ := startFixture(t)
	d.mustOK(http.MethodPost, api.PathRefresh, api.RefreshRequest{Namespace: "fx"}, nil)
	var sr api.SearchResponse
	d.mustOK(http.MethodGet, api.PathSearch+"?q="+q("DELETE note"), nil, &sr)
	if len(sr.Results) == 0 || sr.Results[0].Namespace != "fx" || sr.Results[0].Name != "delete_note" {
		t.Fatalf("search: %+v", sr.Results)
	}
	for i := 1; i < len(sr.Results); i++ {
		if sr.Results[i].Score > sr.Results[i-1].Score {
			t.Errorf("results not sorted by score: %+v", sr.Results)
		}
	}
	if code, e := d.do(http.MethodGet, api.PathSearch+"?q=", nil, nil); code != http.StatusBadRequest || e.Code != api.CodeBadRequest {
		t.Errorf("empty search: %d %+v", code, e)
	}
}

func TestCall(t *testing.T) {
	_, d, started := startFixture(t)
	code, resp, e := d.call("fx", "echo", `{"text":"hi there"}`, false)
	if e != nil {
		t.Fatalf("call echo: %d %+v", code, e)
	}
	if got := text(t, resp); got != "hi there" || resp.IsError {
		t.Errorf("echo = %q (isError %v)", got, resp.IsError)
	}
	// The call read the tools first (for the policy): the snapshot is warm.
	if ns := d.namespaces()["fx"]; ns.State != api.StateCached || ns.Live != 1 {
		t.Errorf("fx after call: %+v", ns)
	}
	if b, _ := os.ReadFile(started); strings.Count(string(b), "started") != 1 {
		t.Errorf("server started %q times, want once", b)
	}

	_, resp, e = d.call("fx", "fail", "", false)
	if e != nil || !resp.IsError {
		t.Errorf("fail tool: %+v %+v", resp, e)
	}

	for _, bad := range []string{`[1,2]`, `"text"`, `7`} {
		code, _, e := d.call("fx", "echo", bad, false)
		if code != http.StatusBadRequest || e.Code != api.CodeBadRequest {
			t.Errorf("args %s: %d %+v", bad, code, e)
		}
	}
	if code, e := d.do(http.MethodPost, api.PathCall, `{"namespace":"fx","tool":"echo","arguments":{"text":`, nil); code != http.StatusBadRequest || e.Code != api.CodeBadRequest {
		t.Errorf("malformed body: %d %+v", code, e)
	}

	code, _, e = d.call("fz", "echo", `{}`, false)
	if code != http.StatusNotFound || e.Code != api.CodeUnknownNamespace || e.Suggestion != "fx" {
		t.Errorf("unknown namespace: %d %+v", code, e)
	}
	code, _, e = d.call("fx", "ecko", `{}`, false)
	if code != http.StatusNotFound || e.Code != api.CodeUnknownTool || e.Suggestion != "echo" {
		t.Errorf("unknown tool: %d %+v", code, e)
	}
	// Suggested by meaning when not by spelling (the search thesaurus).
	code, _, e = d.call("fx", "erase_note", `{}`, false)
	if code != http.StatusNotFound || e.Code != api.CodeUnknownTool || e.Suggestion != "delete_note" {
		t.Errorf("unknown tool by meaning: %d %+v", code, e)
	}

	var st api.Status
	d.mustOK(http.MethodGet, api.PathStatus, nil, &st)
	if st.Calls != 2 || st.Live != 1 || st.Servers != 6 || st.DaemonKey != string(d.key) || len(st.Namespaces) != 6 || st.Manager != "direct" {
		t.Errorf("status = %+v", st)
	}
}

func TestPolicy(t *testing.T) {
	_, d, _ := startFixture(t)
	args := `{"name":"n"}`
	code, _, e := d.call("fx", "delete_note", args, false)
	if code != http.StatusConflict || e.Code != api.CodeConfirmation || e.Tool != "delete_note" {
		t.Errorf("unconfirmed destructive: %d %+v", code, e)
	}
	if _, _, e := d.call("fx", "delete_note", args, true); e != nil {
		t.Errorf("confirmed destructive: %+v", e)
	}
	for _, confirmed := range []bool{false, true} {
		code, _, e := d.call("deny", "delete_note", args, confirmed)
		if code != http.StatusForbidden || e.Code != api.CodePolicyDenied {
			t.Errorf("deny (confirmed %v): %d %+v", confirmed, code, e)
		}
	}
	// Read-only tools never ask, under any policy.
	for _, ns := range []string{"fx", "deny", "strict"} {
		if _, _, e := d.call(ns, "get_note", args, false); e != nil {
			t.Errorf("%s read-only: %+v", ns, e)
		}
	}
	// Unannotated: allowed by default, confirmed under unannotated=confirm.
	if _, _, e := d.call("fx", "unannotated", "", false); e != nil {
		t.Errorf("fx unannotated: %+v", e)
	}
	code, _, e = d.call("strict", "unannotated", "", false)
	if code != http.StatusConflict || e.Code != api.CodeConfirmation {
		t.Errorf("strict unannotated: %d %+v", code, e)
	}
	if _, _, e := d.call("strict", "unannotated", "", true); e != nil {
		t.Errorf("strict unannotated confirmed: %+v", e)
	}
}

func TestAnnotationsUnknownRefuses(t *testing.T) {
	_, d, _ := startFixture(t)
	// nolist runs and answers calls, but its tools cannot be listed: the
	// call is refused even for a tool that would be harmless, and even
	// when confirmed, because the policy cannot be decided.
	for _, confirmed := range []bool{false, true} {
		code, _, e := d.call("nolist", "echo", `{"text":"x"}`, confirmed)
		if code != http.StatusConflict || e.Code != api.CodeAnnotationsUnknown || !strings.Contains(e.Error, "listing is switched off") {
			t.Fatalf("nolist call (confirmed %v): %d %+v", confirmed, code, e)
		}
	}
}

func TestServerThatCannotStartIsRefusedWithItsStderr(t *testing.T) {
	_, d, _ := startFixture(t)
	// broken fails to start and has no snapshot: the call is refused, and
	// the answer is the start failure with the server's stderr (what the
	// user must fix), then the cooldown.
	code, _, e := d.call("broken", "echo", `{"text":"x"}`, false)
	if code != http.StatusBadGateway || e.Code != api.CodeStartFailed || !strings.Contains(e.Stderr, "boom: no database") {
		t.Fatalf("broken call: %d %+v", code, e)
	}
	code, _, e = d.call("broken", "echo", `{"text":"x"}`, true)
	if code != http.StatusServiceUnavailable || e.Code != api.CodeCooldown || !strings.Contains(e.Stderr, "boom: no database") {
		t.Fatalf("broken call in cooldown: %d %+v", code, e)
	}
}

func TestStartFailureThenCooldown(t *testing.T) {
	_, d, _ := startFixture(t)
	// lenient allows everything, so it needs no annotations and the start
	// failure itself is the answer.
	code, _, e := d.call("lenient", "echo", `{"text":"x"}`, false)
	if code != http.StatusBadGateway || e.Code != api.CodeStartFailed || !strings.Contains(e.Stderr, "boom: lenient") {
		t.Fatalf("first call: %d %+v", code, e)
	}
	code, _, e = d.call("lenient", "echo", `{"text":"x"}`, false)
	if code != http.StatusServiceUnavailable || e.Code != api.CodeCooldown || e.RetryAfter == nil || !strings.Contains(e.Stderr, "boom: lenient") {
		t.Fatalf("second call: %d %+v", code, e)
	}
}

func TestBinaryResultsGoToTheStore(t *testing.T) {
	_, d, _ := startFixture(t)
	for _, c := range []struct {
		tool string
		want []byte
		mime string
	}{
		{"image", fixture.PNG(), "image/png"},
		{"audio", fixture.WAV(), "audio/wav"},
		{"blob", fixture.Blob, "application/octet-stream"},
	} {
		_, resp, e := d.call("fx", c.tool, "", false)
		if e != nil {
			t.Fatalf("%s: %+v", c.tool, e)
		}
		if len(resp.Blobs) != 1 {
			t.Fatalf("%s: blobs = %+v", c.tool, resp.Blobs)
		}
		b := resp.Blobs[0]
		got, err := os.ReadFile(b.Path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(c.want) || b.Size != int64(len(c.want)) || b.MimeType != c.mime || b.Index != 0 || b.Name == "" {
			t.Errorf("%s: blob %+v, %d bytes", c.tool, b, len(got))
		}
		if strings.Contains(string(resp.Result), `"data"`) || strings.Contains(string(resp.Result), `"blob":"`) ||
			!strings.Contains(string(resp.Result), `"_mcpx":{"blob":0}`) {
			t.Errorf("%s: result still carries base64 or lacks the marker: %s", c.tool, resp.Result)
		}
	}
}

func TestRequestChecks(t *testing.T) {
	_, d, _ := startFixture(t)
	if code, e := d.do(http.MethodGet, api.PathCall, nil, nil); code != http.StatusMethodNotAllowed || e.Code != api.CodeMethodNotAllowed {
		t.Errorf("GET call: %d %+v", code, e)
	}
	if code, e := d.do(http.MethodGet, "/v1/nope", nil, nil); code != http.StatusNotFound || e.Code != api.CodeNotFound {
		t.Errorf("unknown route: %d %+v", code, e)
	}
	huge := `{"namespace":"fx","tool":"echo","arguments":{"text":"` + strings.Repeat("x", maxBody) + `"}}`
	if code, e := d.do(http.MethodPost, api.PathCall, huge, nil); code != http.StatusRequestEntityTooLarge || e.Code != api.CodeRequestTooLarge {
		t.Errorf("huge body: %d %+v", code, e)
	}
	if code, e := d.do(http.MethodGet, api.PathTools+"?ns=nope", nil, nil); code != http.StatusNotFound || e.Code != api.CodeUnknownNamespace {
		t.Errorf("tools of unknown ns: %d %+v", code, e)
	}
}

func TestPeerCheck(t *testing.T) {
	self := os.Getuid()
	if err := (peer{uid: self}).check(self); err != nil {
		t.Errorf("own uid refused: %v", err)
	}
	if err := (peer{uid: self + 1}).check(self); err == nil {
		t.Error("other uid admitted")
	}
	if err := (peer{uid: self, err: errTestPeer}).check(self); err == nil {
		t.Error("unreadable credentials admitted")
	}
}

// The daemon decodes a snapshot's tools once, however many requests read
// them (discovery, schema, search, calls).
func TestSnapshotDecodedOnceAcrossRequests(t *testing.T) {
	_, d, _ := startFixture(t)
	var rr api.RefreshResponse
	d.mustOK(http.MethodPost, api.PathRefresh, api.RefreshRequest{Namespace: "fx"}, &rr)
	before := indexDecodes.Load()
	for i := 0; i < 25; i++ {
		var tr api.ToolsResponse
		d.mustOK(http.MethodGet, api.PathTools+"?ns=fx", nil, &tr)
		if len(tr.Tools) == 0 || tr.Tools[0].Namespace != "fx" || len(tr.Tools[0].Definition) == 0 {
			t.Fatalf("tools = %+v", tr)
		}
		d.mustOK(http.MethodGet, api.PathSchema+"?ns=fx&tool=echo", nil, &tr)
		if len(tr.Tools) != 1 || tr.Tools[0].Name != "echo" {
			t.Fatalf("schema fx.echo = %+v", tr)
		}
		var sr api.SearchResponse
		d.mustOK(http.MethodGet, api.PathSearch+"?q=echo", nil, &sr)
		var nr api.NamespacesResponse
		d.mustOK(http.MethodGet, api.PathNamespaces, nil, &nr)
		var cr api.CallResponse
		d.mustOK(http.MethodPost, api.PathCall, api.CallRequest{Namespace: "fx", Tool: "echo", Arguments: json.RawMessage(`{"text":"x"}`)}, &cr)
	}
	if n := indexDecodes.Load() - before; n > 1 {
		t.Fatalf("125 requests decoded the snapshot %d times, want at most once", n)
	}
}

// /debug/pprof/ is served only by a daemon started with MCPX_DEBUG=1.
func TestPprofOnlyWithMCPXDebug(t *testing.T) {
	for _, debug := range []bool{false, true} {
		w := newWorld(t, "")
		w.writeConfig(fixtureConfig(filepath.Join(w.root, "started")))
		if debug {
			w.env["MCPX_DEBUG"] = "1"
		}
		d := w.start()
		resp, err := d.http.Get("http://mcpx/debug/pprof/")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if debug && (resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "goroutine")) {
			t.Errorf("MCPX_DEBUG=1: GET /debug/pprof/ = %d %.200s", resp.StatusCode, body)
		}
		if !debug && resp.StatusCode != http.StatusNotFound {
			t.Errorf("without MCPX_DEBUG: GET /debug/pprof/ = %d, want 404", resp.StatusCode)
		}
		resp, err = d.http.Get("http://mcpx/debug/pprof/goroutine?debug=1")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if (resp.StatusCode == http.StatusOK) != debug {
			t.Errorf("MCPX_DEBUG=%v: GET /debug/pprof/goroutine = %d", debug, resp.StatusCode)
		}
	}
}

// ?brief=1 lists names and summaries only, in the same order, as rows
// (api.DecodeToolRows), encoded once and the same on every request.
func TestToolsBrief(t *testing.T) {
	_, d, _ := startFixture(t)
	var rr api.RefreshResponse
	d.mustOK(http.MethodPost, api.PathRefresh, api.RefreshRequest{Namespace: "fx"}, &rr)
	var full api.ToolsResponse
	var raw, again []byte
	d.mustOK(http.MethodGet, api.PathTools+"?ns=fx", nil, &full)
	d.mustOK(http.MethodGet, api.PathTools+"?ns=fx&brief=1", nil, &raw)
	d.mustOK(http.MethodGet, api.PathTools+"?ns=fx&brief=1", nil, &again)
	if !bytes.Equal(raw, again) {
		t.Errorf("two brief lists differ:\n%s\n%s", raw, again)
	}
	brief, err := api.DecodeToolRows(raw)
	if err != nil {
		t.Fatalf("%v in %q", err, raw)
	}
	if len(brief.Rows) != len(full.Tools) || len(full.Tools) == 0 || brief.Namespace.Tools != full.Namespace.Tools {
		t.Fatalf("brief %d tools, full %d", len(brief.Rows), len(full.Tools))
	}
	for i, b := range brief.Rows {
		f := full.Tools[i]
		if b.Name != f.Name || b.Summary != api.Summary(f.Description) {
			t.Fatalf("brief tool %d = %+v, full %+v", i, b, f)
		}
	}
}

// GET /v1/namespaces?brief=1 (what `mcpx ls` reads) is the full listing
// as rows (api.DecodeNamespaceRows), with only what a listing does not
// show left out: hash, transport, sharing, scope, fetch time, a failed
// fetch's stderr, and the source of a trusted server.
func TestBriefNamespacesKeepWhatListingsShow(t *testing.T) {
	_, d, _ := startFixture(t)
	var rr api.RefreshResponse
	d.mustOK(http.MethodPost, api.PathRefresh, api.RefreshRequest{Namespace: "fx"}, &rr)
	d.do(http.MethodPost, api.PathRefresh, api.RefreshRequest{Namespace: "broken"}, &rr)
	var full api.NamespacesResponse
	var raw []byte
	d.mustOK(http.MethodGet, api.PathNamespaces, nil, &full)
	d.mustOK(http.MethodGet, api.PathNamespaces+"?brief=1", nil, &raw)
	brief, err := api.DecodeNamespaceRows(raw)
	if err != nil {
		t.Fatalf("%v in %q", err, raw)
	}
	if len(brief.Namespaces) != len(full.Namespaces) || len(full.Namespaces) < 3 {
		t.Fatalf("brief lists %d namespaces, full %d", len(brief.Namespaces), len(full.Namespaces))
	}
	states := map[string]bool{}
	for i, f := range full.Namespaces {
		states[f.State] = true
		want := f
		want.Transport, want.Sharing, want.Scope, want.ServerHash, want.FetchedAt, want.Stderr = "", "", "", "", nil, ""
		if f.State != api.StateUntrusted {
			want.Source = ""
		}
		if got := brief.Namespaces[i]; !reflect.DeepEqual(got, want) {
			t.Errorf("brief row %d = %+v\nwant %+v", i, got, want)
		}
	}
	for _, s := range []string{api.StateCached, api.StateError, api.StateUnread} {
		if !states[s] {
			t.Errorf("no namespace in state %q to compare (states: %v)", s, states)
		}
	}
}
