package api

// PathSubscribe holds a resource subscription for as long as the request
// lasts: POST SubscribeRequest; the answer (once the server holds the
// subscription; an error status otherwise) is NDJSON, one SubscribeFrame a
// line: Subscribed first, then Updated for each update, until the client
// closes the connection (which ends the subscription) or an Error frame
// says why it ended (the server left the config or was redefined, the
// daemon stops). The daemon subscribes with each server once however many
// clients subscribe to a resource.
const PathSubscribe = "/v1/subscribe"

// CodeNoSubscriptions is a server that does not offer resource
// subscriptions (501).
const CodeNoSubscriptions = "subscriptions_not_offered"

// SubscribeRequest asks for the updates of the resource URI of a
// namespace; Session and Cwd choose the instance as for a call.
type SubscribeRequest struct {
	Namespace string `json:"namespace"`
	URI       string `json:"uri"`
	Session   string `json:"session,omitempty"`
	Cwd       string `json:"cwd,omitempty"`
}

// SubscribeFrame is one line of a subscription's answer; exactly one
// member is set.
type SubscribeFrame struct {
	Subscribed *ResourceRef `json:"subscribed,omitempty"`
	// Updated names the resource the server says changed: the one
	// subscribed to, or one below it.
	Updated *ResourceRef `json:"updated,omitempty"`
	Error   *Error       `json:"error,omitempty"`
}

// ResourceRef names a resource of a namespace.
type ResourceRef struct {
	Namespace string `json:"namespace"`
	URI       string `json:"uri"`
}
