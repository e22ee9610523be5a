package api

import "encoding/json"

// Routes of the rest of MCP: resources, prompts (and tasks, tasks.go).
const (
	PathResources = "/v1/resources" // GET [?ns=NS]
	PathRead      = "/v1/read"      // POST ReadRequest
	PathPrompts   = "/v1/prompts"   // GET [?ns=NS]
	PathPrompt    = "/v1/prompt"    // POST PromptRequest
)

// CodeUnknownPrompt is a prompt a namespace does not list (404).
const CodeUnknownPrompt = "unknown_prompt"

// Resource is one entry of a server's resources/list. Definition is the
// object exactly as the server sent it.
type Resource struct {
	Namespace   string          `json:"namespace"`
	URI         string          `json:"uri"`
	Name        string          `json:"name,omitempty"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Definition  json.RawMessage `json:"definition"`
}

// ResourceTemplate is one entry of resources/templates/list.
type ResourceTemplate struct {
	Namespace   string          `json:"namespace"`
	URITemplate string          `json:"uriTemplate"`
	Name        string          `json:"name,omitempty"`
	Title       string          `json:"title,omitempty"`
	Description string          `json:"description,omitempty"`
	MimeType    string          `json:"mimeType,omitempty"`
	Definition  json.RawMessage `json:"definition"`
}

// ResourcesResponse is GET /v1/resources[?ns=]: from the schema cache only.
// Namespaces says, for each namespace asked about, whether its lists are
// cached ("unread" ones contribute nothing until `mcpx refresh`).
type ResourcesResponse struct {
	Namespaces []Namespace        `json:"namespaces"`
	Resources  []Resource         `json:"resources"`
	Templates  []ResourceTemplate `json:"resourceTemplates"`
}

// ReadRequest is POST /v1/read: resources/read of URI on Namespace.
type ReadRequest struct {
	Namespace string `json:"namespace"`
	URI       string `json:"uri"`
	Session   string `json:"session,omitempty"`
	Cwd       string `json:"cwd,omitempty"`
	// Elicit is ElicitDefaults or ElicitDecline (""), or with Stream
	// ElicitAsk.
	Elicit string `json:"elicit,omitempty"`
	Streamed
}

// Streamed asks for a read or a prompt the answer a streamed call gets
// (the fields of CallRequest of the same names): NDJSON StreamFrame
// lines, the server's questions among them (with Elicit ElicitAsk, Sample,
// Roots), ending with the result frame (its CallResponse holds the
// ReadResponse's or PromptResponse's fields) or the error frame.
type Streamed struct {
	Stream   bool `json:"stream,omitempty"`
	NoStatus bool `json:"noStatus,omitempty"`
	Sample   bool `json:"sample,omitempty"`
	Roots    bool `json:"roots,omitempty"`
	Relay    bool `json:"relay,omitempty"`
}

// ReadResponse is the ReadResourceResult as the server sent it, except
// that binary contents moved to the store carry "_mcpx": {"blob": index}
// instead of their base64 "blob" (index in contents).
type ReadResponse struct {
	Result json.RawMessage `json:"result"`
	Blobs  []Blob          `json:"blobs,omitempty"`
}

// Prompt is one entry of a server's prompts/list.
type Prompt struct {
	Namespace   string           `json:"namespace"`
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Definition  json.RawMessage  `json:"definition"`
}

// PromptArgument is one argument a prompt takes.
type PromptArgument struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// PromptsResponse is GET /v1/prompts[?ns=]: from the schema cache only.
type PromptsResponse struct {
	Namespaces []Namespace `json:"namespaces"`
	Prompts    []Prompt    `json:"prompts"`
}

// PromptRequest is POST /v1/prompt: prompts/get.
type PromptRequest struct {
	Namespace string            `json:"namespace"`
	Name      string            `json:"name"`
	Arguments map[string]string `json:"arguments,omitempty"`
	Session   string            `json:"session,omitempty"`
	Cwd       string            `json:"cwd,omitempty"`
	// Elicit is ElicitDefaults or ElicitDecline (""), or with Stream
	// ElicitAsk.
	Elicit string `json:"elicit,omitempty"`
	Streamed
}

// PromptResponse is the GetPromptResult as the server sent it.
type PromptResponse struct {
	Result json.RawMessage `json:"result"`
}
