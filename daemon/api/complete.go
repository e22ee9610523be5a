package api

import "encoding/json"

// PathComplete asks a server for completions of a prompt's or a resource
// template's argument (MCP completion/complete).
const PathComplete = "/v1/complete" // POST CompleteRequest: CompleteResponse

// CompleteRequest is POST /v1/complete: Params are completion/complete's
// params as the server is to get them (ref, argument, context).
type CompleteRequest struct {
	Namespace string          `json:"namespace"`
	Params    json.RawMessage `json:"params"`
	Session   string          `json:"session,omitempty"`
	Cwd       string          `json:"cwd,omitempty"`
}

// CompleteResponse is the server's CompleteResult as it sent it.
type CompleteResponse struct {
	Result json.RawMessage `json:"result"`
}
