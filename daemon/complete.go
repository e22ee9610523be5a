package daemon

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/upstream"
)

// serveComplete answers POST /v1/complete: completion/complete through the
// pool, as serve relays it for its hosts.
func (d *daemon) serveComplete(w http.ResponseWriter, r *http.Request) error {
	var req api.CompleteRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	p := bytes.TrimSpace(req.Params)
	if req.Namespace == "" || len(p) == 0 || p[0] != '{' {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "a completion needs a namespace and params (an object with ref and argument)")
	}
	var head struct {
		Ref *struct {
			Type string `json:"type"`
		} `json:"ref"`
	}
	if err := json.Unmarshal(p, &head); err != nil || head.Ref == nil || head.Ref.Type == "" {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "a completion's params need a ref (ref/prompt or ref/resource)")
	}
	raw, err := d.forward(r, req.Namespace, head.Ref.Type, upstream.Caller{Session: req.Session, Cwd: req.Cwd, Idempotent: true},
		d.forwardHooks(req.Namespace, "", api.Streamed{}, nil), "completion/complete", json.RawMessage(p))
	if err != nil {
		return err
	}
	return writeJSON(w, api.CompleteResponse{Result: raw})
}
