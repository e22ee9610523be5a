package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Elicitation: a server asks the person behind a call for input (MCP
// elicitation/create, form or URL mode). The caller chooses how with
// CallRequest.Elicit. With ElicitAsk the call must be streamed: the
// stream carries an Elicitation frame, the caller answers it with POST
// /v1/elicit (ElicitAnswer) on another connection while the stream waits,
// and the call goes on. A caller that goes away cancels the elicitation;
// one that does not answer within ElicitWait has it cancelled for it.
//
// `mcpx call` answers on a terminal; `mcpx serve` relays the frame to its
// MCP host.

// PathElicit answers an Elicitation frame.
const PathElicit = "/v1/elicit" // POST ElicitAnswer

// Elicitation modes (CallRequest.Elicit, PromptRequest.Elicit,
// ReadRequest.Elicit).
const (
	// ElicitAsk: the caller answers each elicitation (streamed calls only).
	ElicitAsk = "ask"
	// ElicitDefaults: the daemon accepts a form with the defaults its
	// schema gives, and declines one it cannot fill that way (a required
	// field without a default) and every URL.
	ElicitDefaults = "defaults"
	// ElicitDecline: the daemon declines (the default).
	ElicitDecline = "decline"
)

// ElicitModes lists the modes, for messages.
var ElicitModes = []string{ElicitAsk, ElicitDefaults, ElicitDecline}

// ElicitWait is how long the daemon waits for an answer before it cancels
// the elicitation (in minutes, for messages and docs).
const ElicitWait = 10

// Elicitation is a stream frame: the server of Namespace asks for input.
type Elicitation struct {
	// ID names the elicitation in the ElicitAnswer.
	ID        string `json:"id"`
	Namespace string `json:"namespace"`
	// Params are the elicitation/create params exactly as the server sent
	// them (ElicitParams reads them).
	Params json.RawMessage `json:"params"`
	// Key is the input request's key in a 2026-07-28 server's
	// input_required result ("" for a 2025-11-25 server's request), so
	// that a relay can ask its own host under the server's key.
	Key string `json:"key,omitempty"`
	// Method is what the server asks: "" (elicitation/create),
	// MethodSample (a request with Sample set) or MethodRoots (with Roots
	// set); Params are that method's.
	Method string `json:"method,omitempty"`
	// Of is how many questions the caller is asked at once, this one
	// included: a 2026-07-28 server's round whose input requests go to a
	// relay together (0 or 1: alone). They come one frame each, and the
	// caller may answer them in any order.
	Of int `json:"of,omitempty"`
}

// MethodSample is an Elicitation frame's Method when the server asks for
// a language model's answer: its Params are CreateMessageParams, its
// answer a CreateMessageResult.
const MethodSample = "sampling/createMessage"

// MethodRoots is an Elicitation frame's Method when the server asks for
// the caller's roots: its answer is a ListRootsResult.
const MethodRoots = "roots/list"

// ElicitAnswer is POST /v1/elicit: the answer to the Elicitation ID.
// Result is an MCP ElicitResult: {"action": "accept", "content": {...}},
// {"action": "decline"} or {"action": "cancel"}; for a sampling request
// (Method MethodSample) a CreateMessageResult, for roots (MethodRoots) a
// ListRootsResult. The daemon answers 200
// {}, or 404 not_found when the elicitation is over (answered, cancelled
// or its call ended).
type ElicitAnswer struct {
	ID     string          `json:"id"`
	Result json.RawMessage `json:"result"`
	// Error, instead of Result, says why the caller could not answer (a
	// host that refused a sampling request, or failed to list its roots):
	// the server gets it as the request's error.
	Error string `json:"error,omitempty"`
}

// Elicitation actions (ElicitResult).
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
	ActionCancel  = "cancel"
)

// ElicitResult builds an ElicitResult; content is used with accept only.
func ElicitResult(action string, content map[string]any) json.RawMessage {
	r := struct {
		Action  string         `json:"action"`
		Content map[string]any `json:"content,omitempty"`
	}{Action: action}
	if action == ActionAccept {
		r.Content = content
	}
	b, _ := json.Marshal(r)
	return b
}

// ElicitParams are the elicitation/create params mcpx reads.
type ElicitParams struct {
	Mode            string          `json:"mode,omitempty"` // "form" (or empty) or "url"
	Message         string          `json:"message"`
	RequestedSchema json.RawMessage `json:"requestedSchema,omitempty"`
	URL             string          `json:"url,omitempty"`
	ElicitationID   string          `json:"elicitationId,omitempty"`
}

// URLMode reports whether p asks the person to open a URL.
func (p ElicitParams) URLMode() bool { return p.Mode == "url" }

// ElicitField is one field of a form's requested schema, in the schema's
// order.
type ElicitField struct {
	Name        string
	Title       string
	Description string
	// Type is string, number, integer, boolean or array (several
	// choices).
	Type     string
	Format   string // email, uri, date, date-time (strings)
	Required bool
	// Secret: writeOnly, or format password; read without echo.
	Secret bool
	// Default is the schema's default (nil: none).
	Default json.RawMessage
	// Choices (enum, or oneOf/anyOf of const with title) and their
	// titles; for an array, the items'.
	Choices []string
	Titles  []string
	// Bounds: minimum/maximum (numbers), minLength/maxLength (strings),
	// minItems/maxItems (arrays).
	Minimum, Maximum *float64
	MinLen, MaxLen   *int
}

// ErrBadSchema is a requested schema mcpx cannot read as a form.
var ErrBadSchema = errors.New("unreadable requested schema")

// ElicitFields reads a form's requested schema: an object of primitive
// fields (MCP restricts elicitation forms to those), in the order the
// server wrote them.
func ElicitFields(schema json.RawMessage) ([]ElicitField, error) {
	var top struct {
		Type       string          `json:"type"`
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(schema, &top); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadSchema, err)
	}
	if top.Type != "" && top.Type != "object" {
		return nil, fmt.Errorf("%w: type %q, want object", ErrBadSchema, top.Type)
	}
	names, raws, err := orderedMembers(top.Properties)
	if err != nil {
		return nil, fmt.Errorf("%w: properties: %v", ErrBadSchema, err)
	}
	required := map[string]bool{}
	for _, r := range top.Required {
		required[r] = true
	}
	out := make([]ElicitField, 0, len(names))
	for i, name := range names {
		f, err := elicitField(name, raws[i])
		if err != nil {
			return nil, err
		}
		f.Required = required[name]
		out = append(out, f)
	}
	return out, nil
}

// fieldSchema is one property's schema as the elicitation spec allows it.
type fieldSchema struct {
	Type        string          `json:"type"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Format      string          `json:"format"`
	WriteOnly   bool            `json:"writeOnly"`
	Default     json.RawMessage `json:"default"`
	Enum        []string        `json:"enum"`
	EnumNames   []string        `json:"enumNames"`
	OneOf       []constTitle    `json:"oneOf"`
	AnyOf       []constTitle    `json:"anyOf"`
	Items       *fieldSchema    `json:"items"`
	Minimum     *float64        `json:"minimum"`
	Maximum     *float64        `json:"maximum"`
	MinLength   *int            `json:"minLength"`
	MaxLength   *int            `json:"maxLength"`
	MinItems    *int            `json:"minItems"`
	MaxItems    *int            `json:"maxItems"`
}

type constTitle struct {
	Const string `json:"const"`
	Title string `json:"title"`
}

func elicitField(name string, raw json.RawMessage) (ElicitField, error) {
	var s fieldSchema
	if err := json.Unmarshal(raw, &s); err != nil {
		return ElicitField{}, fmt.Errorf("%w: field %q: %v", ErrBadSchema, name, err)
	}
	f := ElicitField{Name: name, Title: s.Title, Description: s.Description, Type: s.Type, Format: s.Format,
		Secret: s.WriteOnly || s.Format == "password", Minimum: s.Minimum, Maximum: s.Maximum, MinLen: s.MinLength, MaxLen: s.MaxLength}
	if len(s.Default) > 0 && string(s.Default) != "null" {
		f.Default = s.Default
	}
	choices := &s
	if s.Type == "array" {
		if s.Items == nil {
			return ElicitField{}, fmt.Errorf("%w: field %q: an array without items", ErrBadSchema, name)
		}
		choices = s.Items
		f.MinLen, f.MaxLen = s.MinItems, s.MaxItems
	}
	f.Choices, f.Titles = choicesOf(choices)
	switch s.Type {
	case "string", "number", "integer", "boolean":
	case "array":
		if len(f.Choices) == 0 {
			return ElicitField{}, fmt.Errorf("%w: field %q: an array without choices", ErrBadSchema, name)
		}
	default:
		return ElicitField{}, fmt.Errorf("%w: field %q has type %q", ErrBadSchema, name, s.Type)
	}
	return f, nil
}

// choicesOf reads enum (+ enumNames) or oneOf/anyOf const+title.
func choicesOf(s *fieldSchema) (choices, titles []string) {
	if len(s.Enum) > 0 {
		choices = s.Enum
		if len(s.EnumNames) == len(s.Enum) {
			titles = s.EnumNames
		}
		return choices, titles
	}
	for _, list := range [][]constTitle{s.OneOf, s.AnyOf} {
		for _, c := range list {
			choices = append(choices, c.Const)
			titles = append(titles, c.Title)
		}
		if len(choices) > 0 {
			return choices, titles
		}
	}
	return nil, nil
}

// orderedMembers returns an object's member names and values in order.
func orderedMembers(obj json.RawMessage) ([]string, []json.RawMessage, error) {
	if len(bytes.TrimSpace(obj)) == 0 || string(bytes.TrimSpace(obj)) == "null" {
		return nil, nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(obj))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, errors.New("not an object")
	}
	var names []string
	var vals []json.RawMessage
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, nil, err
		}
		names = append(names, name)
		vals = append(vals, v)
	}
	return names, vals, nil
}

// ElicitDefaultContent is the content accepting a form with its schema's
// defaults: every field that has one. ok is false when a required field
// has none (the form cannot be accepted that way).
func ElicitDefaultContent(fields []ElicitField) (content map[string]any, ok bool) {
	content = map[string]any{}
	for _, f := range fields {
		if f.Default == nil {
			if f.Required {
				return nil, false
			}
			continue
		}
		content[f.Name] = f.Default
	}
	return content, true
}

// CheckElicitResult checks an answer to an elicitation: an ElicitResult
// whose action is accept, decline or cancel, its content an object.
func CheckElicitResult(raw json.RawMessage) error {
	var r struct {
		Action  string          `json:"action"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("not an ElicitResult: %w", err)
	}
	switch r.Action {
	case ActionAccept, ActionDecline, ActionCancel:
	default:
		return fmt.Errorf("action %q (an elicitation result's is accept, decline or cancel)", r.Action)
	}
	if c := r.Content; len(c) > 0 && string(c) != "null" && c[0] != '{' {
		return errors.New("an elicitation result's content is an object")
	}
	return nil
}

// CheckSampleResult checks an answer to a sampling request: a
// CreateMessageResult, with a role and content.
func CheckSampleResult(raw json.RawMessage) error {
	var r struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("not a CreateMessageResult: %w", err)
	}
	if r.Role == "" || len(r.Content) == 0 || string(r.Content) == "null" {
		return errors.New("a sampling result (CreateMessageResult) has a role and content")
	}
	return nil
}

// CheckRootsResult checks an answer to roots/list: a ListRootsResult, a
// list of roots each with a file:// URI.
func CheckRootsResult(raw json.RawMessage) error {
	var r struct {
		Roots []struct {
			URI string `json:"uri"`
		} `json:"roots"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return fmt.Errorf("not a ListRootsResult: %w", err)
	}
	if r.Roots == nil {
		return errors.New("a roots result (ListRootsResult) has a list of roots")
	}
	for _, root := range r.Roots {
		if !strings.HasPrefix(root.URI, "file://") {
			return fmt.Errorf("root %q: a root's uri is a file:// URI", root.URI)
		}
	}
	return nil
}

// CheckAnswer checks an answer to a question of method (an Elicitation's
// Method) for the shape of its result.
func CheckAnswer(method string, raw json.RawMessage) error {
	switch method {
	case MethodSample:
		return CheckSampleResult(raw)
	case MethodRoots:
		return CheckRootsResult(raw)
	}
	return CheckElicitResult(raw)
}
