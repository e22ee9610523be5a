package daemon

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/config"
	"github.com/mcpx-dev/mcpx/daemon/api"
	"github.com/mcpx-dev/mcpx/upstream"
)

// serveCall answers POST /v1/call: find the server and tool, enforce the
// destructive-call policy (DESIGN §7), call through the pool, move binary
// content into the store.
func (d *daemon) serveCall(w http.ResponseWriter, r *http.Request) error {
	var req api.CallRequest
	if err := decodeBody(r, &req); err != nil {
		return err
	}
	if req.Namespace == "" || req.Tool == "" {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "a call needs a namespace and a tool")
	}
	if a := bytes.TrimSpace(req.Arguments); len(a) > 0 && string(a) != "null" && (a[0] != '{' || !json.Valid(a)) {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "arguments of %s.%s must be a JSON object", req.Namespace, req.Tool)
	}

	if err := checkElicit(req.Elicit, req.Stream); err != nil {
		return err
	}
	if (req.Sample || req.Roots) && !req.Stream {
		return apiErr(http.StatusBadRequest, api.CodeBadRequest, "sample and roots need a streamed answer (the requests go out on it)")
	}

	st := d.state.Load()
	s, err := st.server(req.Namespace)
	if err != nil {
		return err
	}
	if err := runnable(s); err != nil {
		return err
	}
	if !req.Stream {
		resp, err := d.call(r, st, s, req, nil)
		if err != nil {
			return err
		}
		return writeCall(w, resp)
	}
	return d.streamAnswer(w, st, s.Name, req.NoStatus, func(stream *frameStream) (*api.CallResponse, error) {
		return d.call(r, st, s, req, stream)
	})
}

// call runs one tool call for serveCall: the tool is looked up, the policy
// enforced, the arguments typed and checked, then the server called
// (stream, when not nil, receiving its progress and log notices and, with
// elicit mode ask, its elicitations).
func (d *daemon) call(r *http.Request, st *state, s *config.Server, req api.CallRequest, stream *frameStream) (*api.CallResponse, error) {
	snap, view := d.toolsOf(st, s)
	if e := hiddenTool(s, req.Tool); e != nil {
		return nil, e
	}
	var ts *toolSchema  // the tool's input schema, when known
	var found *api.Tool // the tool's cached definition, when known
	pol := effectivePolicy(s.Options.Policy)
	fetched := false
	if !usable(snap) && (pol.needsAnnotations() || !req.NoValidate) {
		// The policy needs the tool's annotations, or the arguments
		// their schema: read them now.
		fresh, err := d.fetch(r.Context(), st, s.Name)
		switch {
		case err == nil:
			snap, fetched = fresh, true
		case pol.needsAnnotations():
			return nil, refuseUnlisted(s.Name, req.Tool, err)
		default:
			// Only validation wanted the schema. A server that cannot
			// run is reported now (the call would only meet its
			// cooldown); any other listing failure leaves the call
			// unchecked.
			if e := cannotRun(err); e != nil {
				e.body.Namespace, e.body.Tool = s.Name, req.Tool
				return nil, e
			}
		}
		view = d.viewOf(st, s, snap, "")
	}
	if usable(snap) {
		t, err := lookupTool(s.Name, req.Tool, view)
		if err != nil && !fetched {
			// The snapshot may predate the tool (a server that added it
			// without list_changed): read the list once more. The call
			// is refused unless the fresh list has the tool.
			fresh, ferr := d.fetch(r.Context(), st, s.Name)
			if ferr != nil {
				if pol.needsAnnotations() {
					return nil, refuseUnlisted(s.Name, req.Tool, ferr)
				}
				return nil, err
			}
			snap, view = fresh, d.viewOf(st, s, fresh, "")
			t, err = lookupTool(s.Name, req.Tool, view)
		}
		if err != nil {
			return nil, err
		}
		ts = view.idx.derived.schemaOf(t)
		if err := pol.check(s.Name, t.Name, ts.hint, req.Confirmed); err != nil {
			return nil, err
		}
		found = &t
	}
	args, err := buildArgs(s.Name, req.Tool, ts, req)
	if err != nil {
		return nil, err
	}

	spec, err := d.spec(r.Context(), st, s, snap)
	if err != nil {
		return nil, err
	}
	caller := upstream.Caller{Session: req.Session, Cwd: req.Cwd}
	support := ""
	if found != nil {
		support = ts.taskSupport
		caller.Idempotent = ts.resendable
	}
	asTask, err := callAsTask(s.Name, req, support)
	if err != nil {
		return nil, err
	}
	if asTask {
		d.calls.Add(1)
		run, err := d.startTask(r.Context(), s.Name, req.Tool, spec, caller, args)
		if err != nil {
			return nil, err
		}
		if info := d.snapshotInfo(run); req.Detach && info.TaskID != "" {
			return &api.CallResponse{Result: json.RawMessage("null"), Task: &info}, nil
		}
		resp, err := d.taskResponse(r.Context(), run)
		if err != nil && r.Context().Err() != nil {
			run.requestCancel() // the caller gave up waiting
		}
		return resp, err
	}
	d.calls.Add(1)
	answers := upstream.Offer{Sampling: req.Sample, Roots: req.Roots}
	hooks := upstream.Hooks{Answer: d.answerer(s.Name, req.Elicit, answers, stream)}
	if req.Relay {
		hooks.Offer = &upstream.Offer{Elicitation: req.Elicit == api.ElicitAsk, Sampling: req.Sample, Roots: req.Roots}
	}
	if stream != nil {
		hooks.Observe = stream.observe
	}
	if found != nil {
		hooks.Tool = found.Definition
	}
	return d.finishCall(st, s.Name, req, snap, func() (json.RawMessage, error) {
		return d.pools.CallWith(r.Context(), spec, caller, req.Tool, args, hooks)
	})
}

// finishCall runs call (the request to the server) and turns its answer
// into the CallResponse: errors mapped and named, binary content stored.
func (d *daemon) finishCall(st *state, ns string, req api.CallRequest, snap *cache.Snapshot, call func() (json.RawMessage, error)) (*api.CallResponse, error) {
	raw, err := call()
	d.pokeStatus()
	if err != nil {
		e := mapError(err)
		if e.body.Namespace == "" {
			e.body.Namespace = ns
		}
		e.body.Tool = req.Tool
		return nil, e
	}
	if !usable(snap) || stale(snap, time.Now()) {
		// No snapshot, one recording a failed listing, or one whose
		// caching hint ran out: the server answers now, so read its
		// list for the next `ls`.
		d.fetchLater(st, ns)
	}
	if isErr, ok := plainResult(raw); ok {
		// Nothing to move into the store: the result goes out as the
		// server sent it, without a decode and re-encode (writeCall).
		return &api.CallResponse{Result: raw, IsError: isErr}, nil
	}
	resp, err := d.extractBlobs(ns, req.Tool, raw)
	if err != nil {
		return nil, apiErr(http.StatusBadGateway, api.CodeTransport, "result of %s.%s: %v", ns, req.Tool, err)
	}
	if req.Raw {
		// The result exactly as received; the blobs stay listed (and
		// stored) beside it.
		resp.Result = raw
	}
	return &resp, nil
}

// callAsTask decides whether req runs as a task: the cached tool's
// execution.taskSupport ("" when unknown) is "required", or "optional" and the caller asked
// (--task or --detach). Asking for a task of a tool that does not support
// them is a bad request.
func callAsTask(ns string, req api.CallRequest, support string) (bool, error) {
	switch support {
	case "required":
		return true, nil
	case "optional":
		return req.Task || req.Detach, nil
	}
	if req.Task {
		return false, apiErr(http.StatusBadRequest, api.CodeBadRequest, "%s.%s does not run as a task (its taskSupport is %q)", ns, req.Tool, support)
	}
	return false, nil
}

// writeCall answers 200 with resp. A result without blobs or a task is
// written as it is held (the server's bytes), not re-encoded.
func writeCall(w http.ResponseWriter, resp *api.CallResponse) error {
	if len(resp.Blobs) > 0 || resp.Task != nil || len(resp.Result) == 0 {
		return writeJSON(w, resp)
	}
	return writeRawJSON(w, []byte(`{"result":`), resp.Result, []byte(`,"isError":`+strconv.FormatBool(resp.IsError)+"}\n"))
}

// plainResult reports whether raw, a result as upstream read it (valid
// JSON), is an object that cannot hold binary content nor a "_mcpx" key of
// the server's own (no "data", "blob" or "_mcpx" key, and no escape that
// could spell one), and whether it says isError. ok false sends the result
// through extractBlobs.
func plainResult(raw json.RawMessage) (isError, ok bool) {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 || b[0] != '{' {
		return false, false
	}
	for _, key := range [][]byte{[]byte(`"data"`), []byte(`"blob"`), []byte(`"_mcpx"`), []byte(`\u`)} {
		if bytes.Contains(b, key) {
			return false, false
		}
	}
	if !bytes.Contains(b, []byte(`"isError"`)) {
		return false, true
	}
	var top struct {
		IsError json.RawMessage `json:"isError"`
	}
	if json.Unmarshal(b, &top) != nil {
		return false, false
	}
	_ = json.Unmarshal(top.IsError, &isError)
	return isError, true
}

// lookupTool finds tool in v (a map lookup), or answers 404 with the
// nearest name.
func lookupTool(ns, tool string, v *toolView) (api.Tool, error) {
	if v != nil {
		if t, ok := v.find(tool); ok {
			return t, nil
		}
	}
	return findTool(ns, tool, v.list())
}

// refuseUnlisted is the answer to a call whose tool list could not be read
// (err) although the policy needs it: the call is refused, naming why the
// server cannot run when that is the cause.
func refuseUnlisted(ns, tool string, err error) error {
	if e := cannotRun(err); e != nil {
		e.body.Namespace, e.body.Tool = ns, tool
		return e
	}
	return annotationsUnknown(ns, tool, err)
}

// cannotRun returns the mapped error when the listing failed because the
// server cannot run at all (it fails to start, is cooling down after failing,
// needs a variable the caller has not set, needs a login or a scope its login
// lacks). The call is refused either way; saying why the server cannot run
// tells the user what to fix, where "annotations unknown" would not.
func cannotRun(err error) *httpError {
	e := mapError(err)
	switch e.body.Code {
	case api.CodeStartFailed, api.CodeCooldown, api.CodeUnsetVariable, api.CodeConfig, api.CodeLoginRequired, api.CodeInsufficientScope:
		return e
	}
	return nil
}

// annotationsUnknown refuses a call whose policy cannot be decided: the
// snapshot is unusable and reading it failed. It carries the cause's stderr
// and retry time so the user sees why.
func annotationsUnknown(ns, tool string, cause error) error {
	e := apiErr(http.StatusConflict, api.CodeAnnotationsUnknown,
		"refusing %s.%s: its annotations are unknown because listing the tools failed: %v", ns, tool, cause)
	e.body.Namespace, e.body.Tool = ns, tool
	if m := mapError(cause); m.body.Code != "" {
		e.body.Stderr, e.body.RetryAfter = m.body.Stderr, m.body.RetryAfter
	}
	return e
}

// policy is a server's effective destructive-call policy.
type policy struct {
	destructive string // confirm | allow | deny
	unannotated string // allow | confirm
}

// effectivePolicy fills the built-in defaults (destructive confirm,
// unannotated allow) into what the config left empty.
func effectivePolicy(p config.Policy) policy {
	out := policy{destructive: p.Destructive, unannotated: p.Unannotated}
	if out.destructive == "" {
		out.destructive = config.PolicyConfirm
	}
	if out.unannotated == "" {
		out.unannotated = config.PolicyAllow
	}
	return out
}

// needsAnnotations reports whether some tool could be refused, so the
// annotations must be known before calling.
func (p policy) needsAnnotations() bool {
	return p.destructive != config.PolicyAllow || p.unannotated != config.PolicyAllow
}

// hint is what a tool's annotations say about its destructiveness.
type hint int

const (
	// hintSafe: readOnlyHint true, or destructiveHint explicitly false.
	hintSafe hint = iota
	// hintDestructive: destructiveHint true and readOnlyHint not true.
	hintDestructive
	// hintUnannotated: no destructiveHint and readOnlyHint not true, so only
	// the spec's default (destructive) describes the tool. An empty
	// "annotations": {} (what mcp-go sends for a tool without hints), one
	// with only a title or idempotentHint, and "readOnlyHint": false alone
	// all count.
	hintUnannotated
	// hintMalformed: annotations that do not decode (not an object, a hint
	// that is not a boolean). They cannot be trusted to say the tool is
	// harmless, so the destructive rule applies: the policy fails closed.
	hintMalformed
)

// hintOf classifies t.
func hintOf(t api.Tool) hint {
	a, ok := decodeHints(t.Annotations)
	if !ok {
		return hintMalformed
	}
	switch {
	case a.ReadOnly != nil && *a.ReadOnly:
		return hintSafe
	case a.Destructive == nil:
		return hintUnannotated
	case *a.Destructive:
		return hintDestructive
	default:
		return hintSafe
	}
}

// hints are the two annotations the policy reads.
type hints struct {
	ReadOnly    *bool
	Destructive *bool
}

// decodeHints reads readOnlyHint and destructiveHint from raw annotations
// with exact key names. encoding/json matches keys case-insensitively and
// lets a later duplicate win, so {"destructiveHint":true,"ReadOnlyHint":true}
// would read as read-only; here a case variant or a duplicate of either key,
// a hint that is neither a boolean nor null, or anything but an object is
// malformed (ok false), and the caller fails closed. Empty or null raw
// means no annotations.
func decodeHints(raw json.RawMessage) (h hints, ok bool) {
	if len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null" {
		return h, true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return h, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return h, false
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return h, false
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return h, false
		}
		var dst **bool
		switch {
		case key == "readOnlyHint":
			dst = &h.ReadOnly
		case key == "destructiveHint":
			dst = &h.Destructive
		case strings.EqualFold(key, "readOnlyHint"), strings.EqualFold(key, "destructiveHint"):
			return h, false // a case variant: which one did the server mean?
		default:
			continue
		}
		if seen[key] {
			return h, false
		}
		seen[key] = true
		if string(val) == "null" {
			continue
		}
		var b bool
		if json.Unmarshal(val, &b) != nil {
			return h, false
		}
		*dst = &b
	}
	return h, true
}

// check applies the policy to one call of tool, whose annotations say h
// (hintOf, kept per snapshot in toolSchema).
func (p policy) check(ns, tool string, h hint, confirmed bool) error {
	var rule, why string
	switch {
	case h == hintDestructive:
		rule, why = p.destructive, "is marked destructive"
	case h == hintMalformed:
		rule, why = p.destructive, "has annotations mcpx cannot read, so it is treated as destructive"
	case h == hintUnannotated && p.unannotated == config.PolicyConfirm:
		rule, why = config.PolicyConfirm, "does not say whether it is destructive (policy.unannotated is confirm)"
	default:
		return nil
	}
	switch rule {
	case config.PolicyAllow:
		return nil
	case config.PolicyDeny:
		e := apiErr(http.StatusForbidden, api.CodePolicyDenied, "%s.%s %s and policy.destructive is deny for %s", ns, tool, why, ns)
		e.body.Namespace, e.body.Tool = ns, tool
		return e
	default:
		if confirmed {
			return nil
		}
		e := apiErr(http.StatusConflict, api.CodeConfirmation, "%s.%s %s; confirm the call to run it", ns, tool, why)
		e.body.Namespace, e.body.Tool = ns, tool
		return e
	}
}

// extractBlobs moves binary content (image/audio "data", embedded resource
// "blob") of the result of ns.tool into the store and replaces it with
// "_mcpx": {"blob": i}, i being the item's index in content. "_mcpx" is
// mcpx's key: one a server sent itself is dropped, so the marker always
// means a stored blob. Binary data that cannot be stored (not base64, a
// store error) stays inline and is logged: the tool has run, and its result
// must reach the caller.
func (d *daemon) extractBlobs(ns, tool string, raw json.RawMessage) (api.CallResponse, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return api.CallResponse{}, fmt.Errorf("decode result: %w", err)
	}
	resp := api.CallResponse{Result: raw}
	if v, ok := top["isError"]; ok {
		_ = json.Unmarshal(v, &resp.IsError)
	}
	var content []json.RawMessage
	if c, ok := top["content"]; !ok || json.Unmarshal(c, &content) != nil {
		return resp, nil
	}
	changed := false
	for i, item := range content {
		out, blob, err := d.extractItem(i, item)
		if err != nil {
			d.log.Printf("result of %s.%s: content %d: %v; left inline", ns, tool, i, err)
		}
		if out != nil {
			content[i] = out
			changed = true
		}
		if blob != nil {
			resp.Blobs = append(resp.Blobs, *blob)
		}
	}
	if !changed {
		return resp, nil
	}
	c, err := json.Marshal(content)
	if err != nil {
		return api.CallResponse{}, err
	}
	top["content"] = c
	if resp.Result, err = json.Marshal(top); err != nil {
		return api.CallResponse{}, err
	}
	return resp, nil
}

// extractItem handles content item i. out is the item to send instead (nil:
// unchanged); blob is what was stored from it (nil: nothing). An error says
// why binary data was left inline.
func (d *daemon) extractItem(i int, item json.RawMessage) (out json.RawMessage, blob *api.Blob, err error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(item, &m) != nil {
		return nil, nil, nil
	}
	_, spoofed := m["_mcpx"]
	delete(m, "_mcpx")
	blob, err = d.storeBinary(i, m)
	if blob == nil && !spoofed {
		return nil, nil, err
	}
	if blob != nil {
		m["_mcpx"] = json.RawMessage(fmt.Sprintf(`{"blob":%d}`, i))
	}
	out, merr := json.Marshal(m)
	if merr != nil {
		return nil, nil, merr
	}
	return out, blob, err
}

// storeBinary stores item i's binary data, if it has any, leased for
// blobLease, and removes it from m. On error m is unchanged.
func (d *daemon) storeBinary(i int, m map[string]json.RawMessage) (*api.Blob, error) {
	var kind string
	_ = json.Unmarshal(m["type"], &kind)
	var (
		holder map[string]json.RawMessage // the object holding the base64
		field  string
		uri    string
	)
	switch kind {
	case "image", "audio":
		holder, field = m, "data"
	case "resource":
		if json.Unmarshal(m["resource"], &holder) != nil || holder == nil {
			return nil, nil
		}
		field = "blob"
		_ = json.Unmarshal(holder["uri"], &uri)
	default:
		return nil, nil
	}
	var b64 string
	if json.Unmarshal(holder[field], &b64) != nil || b64 == "" {
		return nil, nil
	}
	data, err := decodeBase64(b64)
	if err != nil {
		return nil, err
	}
	// Leased before it becomes visible: no GC can take it before the
	// caller has read it.
	dg, size, _, err := d.store.PutLease(bytes.NewReader(data), blobLease)
	if err != nil {
		return nil, err
	}
	var mime string
	_ = json.Unmarshal(holder["mimeType"], &mime)
	blob := &api.Blob{Index: i, Path: d.store.Path(dg), Digest: string(dg), MimeType: mime, Size: size, Name: blobName(kind, i, uri, mime)}
	delete(holder, field)
	if kind == "resource" {
		res, err := json.Marshal(holder)
		if err != nil {
			return nil, err
		}
		m["resource"] = res
	}
	return blob, nil
}

// blobLease is how long a blob handed to a caller is pinned against GC, so
// the CLI can read or copy it.
const blobLease = 10 * time.Minute

var errBase64 = errors.New("binary content is not valid base64")

// decodeBase64 accepts standard base64 with or without padding, and the URL
// alphabet, which servers send in the wild.
func decodeBase64(s string) ([]byte, error) {
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == ' ' {
			return -1
		}
		return r
	}, s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errBase64
}

// blobName suggests a file name: the resource URI's last element, else
// "<kind>-<index>" with an extension from the MIME type.
func blobName(kind string, i int, uri, mimeType string) string {
	if uri != "" {
		if u, err := url.Parse(uri); err == nil {
			if base := path.Base(u.Path); base != "." && base != "/" && base != "" {
				return base
			}
			if u.Host != "" && u.Path == "" {
				return u.Host
			}
		}
	}
	name := fmt.Sprintf("%s-%d", kind, i)
	if mimeType != "" {
		if exts, _ := mime.ExtensionsByType(mimeType); len(exts) > 0 {
			return name + preferredExt(exts)
		}
	}
	return name
}

// preferredExt picks a common extension ("jpeg" has several).
func preferredExt(exts []string) string {
	for _, e := range exts {
		switch e {
		case ".png", ".jpg", ".gif", ".webp", ".wav", ".mp3", ".ogg", ".pdf", ".json", ".txt":
			return e
		}
	}
	return exts[0]
}
