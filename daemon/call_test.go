package daemon

import (
	"encoding/json"
	"errors"
	"net/http"
	"testing"

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
