package daemon

import (
	"encoding/json"
	"errors"
	"net/http"
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
			if err := p.pol.check("ns", tool, false); err != nil {
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
				if err := p.pol.check("ns", tool, true); err != nil {
					t.Errorf("annotations %s under %s, confirmed: %v", c.annotations, p.name, err)
				}
			}
		}
	}
}

func TestPolicyCodes(t *testing.T) {
	tool := api.Tool{Name: "rm", Annotations: json.RawMessage(`{"destructiveHint":true}`)}
	var he *httpError
	if err := effectivePolicy(config.Policy{}).check("ns", tool, false); !errors.As(err, &he) ||
		he.body.Code != api.CodeConfirmation || he.body.Namespace != "ns" || he.body.Tool != "rm" {
		t.Errorf("confirm: %v", err)
	}
	if err := effectivePolicy(config.Policy{Destructive: config.PolicyDeny}).check("ns", tool, true); !errors.As(err, &he) ||
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
