package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/internal/schemadoc"
	"github.com/mcpx-dev/mcpx/search"
)

// Call arguments travel raw from the CLI (api.CallRequest): a JSON object
// and/or key=value pairs. The daemon types the pairs against the tool's
// cached input schema, then checks the whole object against it with a
// JSON-Schema validator compiled once per snapshot (draft 2020-12 unless the
// schema's $schema names another, e.g. draft-07; local $ref/$defs followed).

// toolSchema is what a call needs of one tool, made once per snapshot: the
// policy hint of its annotations, its task support and its input schema,
// decoded and compiled.
type toolSchema struct {
	hint        hint               // what the annotations say to the policy
	resendable  bool               // readOnlyHint or idempotentHint: may be sent twice (resend.go)
	taskSupport string             // execution.taskSupport: "", "optional", "required" or "forbidden"
	input       map[string]any     // the decoded inputSchema; nil when the tool has none
	validator   *jsonschema.Schema // nil when there is no schema or it does not compile
	err         error              // why it does not compile (validation is then skipped)
}

// schemaOf returns what a call needs of t (toolSchema), made on its first
// use in this snapshot.
func (ix *snapIndex) schemaOf(t api.Tool) *toolSchema {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ts, ok := ix.tools[t.Name]; ok {
		return ts
	}
	ts := compileTool(t)
	if ix.tools == nil {
		ix.tools = map[string]*toolSchema{}
	}
	ix.tools[t.Name] = ts
	return ts
}

func compileTool(t api.Tool) *toolSchema {
	var def struct {
		InputSchema json.RawMessage `json:"inputSchema"`
		Execution   struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	}
	ts := &toolSchema{hint: hintOf(t), resendable: resendable(t.Annotations)}
	err := json.Unmarshal(t.Definition, &def)
	ts.taskSupport = def.Execution.TaskSupport
	if err != nil || len(def.InputSchema) == 0 || string(def.InputSchema) == "null" {
		return ts
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(def.InputSchema))
	if err != nil {
		ts.err = err
		return ts
	}
	ts.input, _ = doc.(map[string]any)
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// Schemas come from servers: never let one make the daemon read a file
	// or fetch a URL. Only the embedded meta-schemas resolve.
	c.UseLoader(noLoader{})
	loc := "https://mcpx.invalid/tools/" + url.PathEscape(t.Name) + ".json"
	if err := c.AddResource(loc, doc); err != nil {
		ts.err = err
		return ts
	}
	ts.validator, ts.err = c.Compile(loc)
	return ts
}

// noLoader refuses every external reference.
type noLoader struct{}

func (noLoader) Load(u string) (any, error) {
	return nil, fmt.Errorf("external schema reference %s is not followed", u)
}

// argError is an invalid_arguments answer.
func argError(ns, tool, arg, format string, args ...any) *httpError {
	e := apiErr(http.StatusUnprocessableEntity, api.CodeInvalidArguments, format, args...)
	e.body.Namespace, e.body.Tool, e.body.Argument = ns, tool, arg
	return e
}

// buildArgs makes the arguments object of a call: req.Arguments with the
// typed pairs set over it, checked against ts unless req.NoValidate. ts may
// be nil (no usable snapshot): pairs stay strings, except key:=JSON.
func buildArgs(ns, tool string, ts *toolSchema, req api.CallRequest) (json.RawMessage, error) {
	args := bytes.TrimSpace(req.Arguments)
	if len(args) == 0 || string(args) == "null" {
		args = []byte("{}")
	}
	if args[0] != '{' || !json.Valid(args) {
		return nil, apiErr(http.StatusBadRequest, api.CodeBadRequest, "arguments of %s.%s must be a JSON object", ns, tool)
	}
	var input map[string]any
	if ts != nil {
		input = ts.input
	}
	if len(req.Pairs) > 0 {
		obj := make(map[string]json.RawMessage, len(req.Pairs))
		if string(args) != "{}" { // the CLI's usual call: pairs alone
			if err := json.Unmarshal(args, &obj); err != nil {
				return nil, apiErr(http.StatusBadRequest, api.CodeBadRequest, "arguments of %s.%s: %v", ns, tool, err)
			}
		}
		props, _ := input["properties"].(map[string]any)
		var order []string
		byKey := map[string][]api.ArgPair{}
		for _, p := range req.Pairs {
			if p.Key == "" {
				return nil, apiErr(http.StatusBadRequest, api.CodeBadRequest, "an argument of %s.%s has no name", ns, tool)
			}
			if _, ok := byKey[p.Key]; !ok {
				order = append(order, p.Key)
			}
			byKey[p.Key] = append(byKey[p.Key], p)
		}
		for _, key := range order {
			prop := schemadoc.Resolve(input, schemadoc.Object(props[key]))
			v, err := typePairs(prop, input, byKey[key], req.NoValidate)
			if err != nil {
				return nil, argError(ns, tool, key, "argument %s of %s.%s: %v", key, ns, tool, err)
			}
			obj[key] = v
		}
		var err error
		if args, err = encodeArgs(obj); err != nil {
			return nil, err
		}
	}
	if req.NoValidate || ts == nil || ts.input == nil {
		return args, nil
	}
	return args, validateArgs(ns, tool, ts, args)
}

// typePairs types the values given for one key. One value is typed by the
// property's schema; several build an array, which the schema must admit.
func typePairs(prop, root map[string]any, pairs []api.ArgPair, lenient bool) (json.RawMessage, error) {
	types := schemaTypes(prop)
	if len(pairs) == 1 {
		v, err := typeValue(pairs[0], types)
		if err == nil {
			return v, nil
		}
		// An array parameter given one plain value: an array of one.
		if types["array"] && !pairs[0].JSON {
			item, ierr := typeValue(pairs[0], schemaTypes(schemadoc.Resolve(root, schemadoc.Object(prop["items"]))))
			if ierr == nil {
				return json.RawMessage("[" + string(item) + "]"), nil
			}
		}
		if lenient && !pairs[0].JSON {
			return jsonString(pairs[0].Value), nil
		}
		return nil, err
	}
	if !types["array"] && len(types) > 0 && !lenient {
		return nil, fmt.Errorf("given %d times, but it takes %s, not an array", len(pairs), expected(types))
	}
	itemTypes := schemaTypes(schemadoc.Resolve(root, schemadoc.Object(prop["items"])))
	parts := make([]string, 0, len(pairs))
	for _, p := range pairs {
		v, err := typeValue(p, itemTypes)
		if err != nil {
			if !lenient {
				return nil, err
			}
			v = jsonString(p.Value)
		}
		parts = append(parts, string(v))
	}
	return json.RawMessage("[" + strings.Join(parts, ",") + "]"), nil
}

// typeValue types one pair: key:=JSON as given, key=value by types.
func typeValue(p api.ArgPair, types map[string]bool) (json.RawMessage, error) {
	if p.JSON {
		v := bytes.TrimSpace([]byte(p.Value))
		if !json.Valid(v) {
			return nil, fmt.Errorf("%s:= needs a JSON value, not %q", p.Key, p.Value)
		}
		return v, nil
	}
	return coerce(p.Value, types)
}

// validateArgs checks args against ts: unknown names first (with the
// nearest parameter), then missing required ones, then the whole schema.
func validateArgs(ns, tool string, ts *toolSchema, args json.RawMessage) error {
	inst, err := decodeArgs(args)
	if err != nil {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "arguments of %s.%s: %v", ns, tool, err)
	}
	obj, _ := inst.(map[string]any)
	if e := unknownArgs(ns, tool, ts, obj); e != nil {
		return e
	}
	if e := missingArgs(ns, tool, ts, obj); e != nil {
		return e
	}
	return schemaArgs(ns, tool, ts, inst)
}

// unknownArgs refuses names a closed schema does not list, suggesting the
// nearest parameter for the first.
func unknownArgs(ns, tool string, ts *toolSchema, obj map[string]any) *httpError {
	props, hasProps := ts.input["properties"].(map[string]any)
	if !hasProps || !closed(ts.input) {
		return nil
	}
	var unknown []string
	for k := range obj {
		if _, ok := props[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	k := unknown[0]
	e := argError(ns, tool, k, "%s.%s has no parameter %q", ns, tool, k)
	if len(unknown) > 1 {
		e.body.Error = fmt.Sprintf("%s.%s has no parameters %s", ns, tool, quoteAll(unknown))
	}
	names := make([]string, 0, len(props)) // (only a refusal needs them)
	for name := range props {
		names = append(names, name)
	}
	sort.Strings(names)
	e.body.Suggestion = search.Suggest(k, names)
	for _, u := range unknown {
		e.body.Problems = append(e.body.Problems, fmt.Sprintf("at /%s: unknown parameter", u))
	}
	return e
}

// missingArgs refuses arguments without every required one.
func missingArgs(ns, tool string, ts *toolSchema, obj map[string]any) *httpError {
	req, _ := ts.input["required"].([]any)
	var missing []string
	for _, r := range req {
		if s, ok := r.(string); ok {
			if _, there := obj[s]; !there {
				missing = append(missing, s)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	e := argError(ns, tool, missing[0], "%s.%s needs argument %s", ns, tool, quoteAll(missing))
	for _, m := range missing {
		e.body.Problems = append(e.body.Problems, fmt.Sprintf("at /%s: missing required argument", m))
	}
	return e
}

// schemaArgs checks inst against the whole input schema, naming every
// innermost failure.
func schemaArgs(ns, tool string, ts *toolSchema, inst any) error {
	if ts.validator == nil {
		return nil
	}
	verr, ok := ts.validator.Validate(inst).(*jsonschema.ValidationError)
	if !ok || verr == nil {
		return nil
	}
	var problems []string
	arg := ""
	for _, l := range leaves(verr) {
		loc := "/" + strings.Join(l.InstanceLocation, "/")
		problems = append(problems, fmt.Sprintf("at %s: %s", loc, l.ErrorKind.LocalizedString(printer)))
		if arg == "" && len(l.InstanceLocation) > 0 {
			arg = l.InstanceLocation[0]
		}
	}
	slices.Sort(problems)
	problems = slices.Compact(problems)
	e := argError(ns, tool, arg, "arguments of %s.%s do not match its input schema: %s", ns, tool, problems[0])
	if len(problems) > 1 {
		e.body.Error += fmt.Sprintf(" (and %d more)", len(problems)-1)
	}
	e.body.Problems = problems
	return e
}

var printer = message.NewPrinter(language.English)

// leaves are the innermost failures of a validation error.
func leaves(e *jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return []*jsonschema.ValidationError{e}
	}
	var out []*jsonschema.ValidationError
	for _, c := range e.Causes {
		out = append(out, leaves(c)...)
	}
	return out
}

// closed reports whether an object schema admits only its listed
// properties for the purpose of catching typos: additionalProperties false
// or absent, and no patternProperties. (JSON Schema admits unlisted
// properties when additionalProperties is absent; a tool call almost never
// means to send one, so mcpx refuses it unless --no-validate.)
func closed(s map[string]any) bool {
	if _, ok := s["patternProperties"]; ok {
		return false
	}
	switch ap := s["additionalProperties"].(type) {
	case nil:
		return true
	case bool:
		return !ap
	default:
		return false // a schema for additional properties
	}
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func jsonString(s string) json.RawMessage { b, _ := json.Marshal(s); return b }

// schemaTypes lists the JSON types a property schema admits: its type (one
// or a list), the types of anyOf/oneOf branches, and the kinds of enum/const
// values. Empty means unknown.
func schemaTypes(s map[string]any) map[string]bool {
	types := map[string]bool{}
	if s == nil {
		return types
	}
	for _, t := range schemadoc.Declared(s) {
		types[t] = true
	}
	for _, key := range []string{"anyOf", "oneOf"} {
		alts, _ := s[key].([]any)
		for _, alt := range alts {
			if m, ok := alt.(map[string]any); ok {
				for t := range schemaTypes(m) {
					types[t] = true
				}
			}
		}
	}
	values, _ := s["enum"].([]any)
	if c, ok := s["const"]; ok {
		values = append(values, c)
	}
	for _, v := range values {
		types[kindOf(v)] = true
	}
	if len(types) == 0 {
		if s["properties"] != nil {
			types["object"] = true
		} else if s["items"] != nil {
			types["array"] = true
		}
	}
	return types
}

// kindOf names the JSON type of a decoded value (numbers as float64 or
// json.Number).
func kindOf(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return "number"
		}
		return kindOf(f)
	case float64:
		if v == math.Trunc(v) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return ""
}

// coerce turns a command-line value into JSON of a type the schema admits:
// the value read as JSON when its kind is admitted (an integer also counts
// as a number), else the value as a string when strings are admitted (or
// nothing is known), else an error saying what was expected.
func coerce(value string, types map[string]bool) (json.RawMessage, error) {
	if len(types) == 0 || (len(types) == 1 && types["string"]) {
		return jsonString(value), nil
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(value))
	dec.UseNumber()
	if err := dec.Decode(&v); err == nil && !dec.More() && json.Valid([]byte(value)) {
		kind := kindOf(v)
		if types[kind] || (kind == "integer" && types["number"]) {
			return json.RawMessage(strings.TrimSpace(value)), nil
		}
	}
	if types["string"] {
		return jsonString(value), nil
	}
	return nil, fmt.Errorf("%q is not %s", value, expected(types))
}

// expected names the admitted types for an error message.
func expected(types map[string]bool) string {
	article := map[string]string{"integer": "an integer", "number": "a number", "boolean": "true or false",
		"array": "a JSON array", "object": "a JSON object", "null": "null"}
	var names []string
	for _, t := range []string{"integer", "number", "boolean", "array", "object", "null"} {
		if types[t] {
			names = append(names, article[t])
		}
	}
	if len(names) == 0 {
		return "of the expected type"
	}
	return strings.Join(names, " or ")
}
