package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/search"
)

// parseFile reads one source: its server maps and its top-level mcpx block.
// Top-level keys other than mcpServers, servers, mcp and mcpx belong to other
// tools and are ignored. The error is the file's: its syntax, its shape, its
// mcpx blocks; an entry mcpx cannot use only gets a Problem (parseEntry).
func parseFile(name string, src []byte) (*file, error) {
	d, err := parseJSONC(name, src)
	if err != nil {
		return nil, err
	}
	return parseDoc(d)
}

// parseDoc is parseFile over a parsed document.
func parseDoc(d *doc) (*file, error) {
	f := &file{entries: map[string]entry{}}
	where := map[string]string{} // server name → map that defined it
	for _, m := range d.root.members {
		switch m.name {
		case formatMCPServers, formatServers, formatOpencode:
			if m.val.kind == '0' && string(d.raw(m.val)) == "null" {
				continue
			}
			if m.val.kind != '{' {
				return nil, d.errAt(m.val.start, ErrType, "%q must be an object of servers", m.name)
			}
			for _, sm := range m.val.members {
				if prev, dup := where[sm.name]; dup && prev != m.name {
					return nil, d.errAt(sm.keyStart, ErrInvalidValue, "server %q is defined in both %q and %q", sm.name, prev, m.name)
				}
				where[sm.name] = m.name
				e, err := d.parseEntry(m.name, sm, &f.warnings)
				if err != nil {
					return nil, err
				}
				f.entries[sm.name] = e
			}
		case "mcpx":
			if isNull(d, m.val) {
				continue
			}
			l, err := d.parseBlock(m.val, "", true)
			if err != nil {
				return nil, err
			}
			f.top = l
		}
	}
	return f, nil
}

// parseEntry reads one server entry of the given top-level format. A value
// of the entry mcpx cannot use (a wrong type, a transport that does not
// fit, neither command nor url, an unknown ${...} form) does not fail the
// file: the entry keeps the first such finding as its Problem
// ("FILE:LINE:COL: what"), is listed but never started, and its siblings
// load. Errors inside the entry's `mcpx` block are mcpx's own settings and
// stay errors, like the file's syntax and shape.
func (d *doc) parseEntry(format string, m member, warnings *[]string) (entry, error) {
	name, n := m.name, m.val
	s := &Server{Name: name, Source: d.file, Raw: d.raw(n)}
	e := entry{server: s}
	if n.kind != '{' {
		d.setProblem(s, d.errAt(n.start, ErrType, "the entry must be an object, not %s", abbrev(d.raw(n))), warnings)
		return e, nil
	}
	if name == "" || strings.ContainsAny(name, ". \t\n") {
		*warnings = append(*warnings, fmt.Sprintf("%s: server name %q should not be empty or contain dots or spaces: tools are addressed as NAME.TOOL",
			d.where(m.keyStart), name))
	}
	r := &entryReader{d: d, format: format, s: s, warnings: warnings}
	for _, k := range n.members {
		if isNull(d, k.val) {
			continue
		}
		if k.name != "mcpx" {
			r.field(k)
			continue
		}
		var err error
		if e.layer, err = d.parseBlock(k.val, name, false); err != nil {
			return entry{}, err
		}
	}
	if r.disabled {
		e.layer.disabled = ptr(true)
	}
	if e.layer.disabled != nil && *e.layer.disabled {
		return e, nil // a tombstone needs no transport, and is never started
	}
	problem := r.problem
	if problem == nil {
		problem = d.checkTransport(n, s, name, r.typ, r.typAt, r.urlAt)
	}
	if problem == nil {
		problem = d.checkRefs(n, format, name)
	}
	if problem != nil {
		s.Transport = ""
		d.setProblem(s, problem, warnings)
	}
	return e, nil
}

// entryReader reads the fields of one server entry of a top-level format
// (mcpServers, servers, or opencode's mcp) into s.
type entryReader struct {
	d        *doc
	format   string
	s        *Server
	warnings *[]string

	typ          string // the transport "type" or "transport" says
	typAt, urlAt int
	disabled     bool        // opencode's "enabled": false
	problem      *ParseError // the first value mcpx cannot use
}

// field reads one key of the entry (not "mcpx"). A value mcpx cannot use
// becomes the entry's problem, if it has none yet; an unknown key is a
// warning.
func (r *entryReader) field(k member) {
	d, s, v, name := r.d, r.s, k.val, r.s.Name
	opencode := r.format == formatOpencode
	var err error
	switch {
	case k.name == "command" && opencode:
		err = r.opencodeCommand(v)
	case k.name == "command":
		s.Command, err = d.str(v, name, k.name)
	case k.name == "args" && !opencode:
		s.Args, err = d.strList(v, name, k.name)
	case k.name == "env" && !opencode, k.name == "environment" && opencode:
		s.Env, err = d.strMap(v, name, k.name)
	case k.name == "cwd" && !opencode:
		s.Cwd, err = d.str(v, name, k.name)
	case k.name == "url":
		s.URL, err = d.str(v, name, k.name)
		r.urlAt = v.start
	case k.name == "headers":
		s.Headers, err = d.strMap(v, name, k.name)
	case k.name == "type", k.name == "transport" && !opencode:
		err = r.transport(k)
	case k.name == "enabled" && opencode:
		var on bool
		on, err = d.boolean(v, name, k.name)
		r.disabled = r.disabled || err == nil && !on
	default:
		r.unknown(k)
	}
	if err != nil && r.problem == nil && !errors.As(err, &r.problem) {
		r.problem = d.errAt(v.start, ErrInvalidValue, "server %q: %s: %v", name, k.name, err)
	}
}

// opencodeCommand reads opencode's "command": the program and its
// arguments in one list.
func (r *entryReader) opencodeCommand(v *node) error {
	cmd, err := r.d.strList(v, r.s.Name, "command")
	if err != nil {
		return err
	}
	if len(cmd) == 0 {
		return r.d.errAt(v.start, ErrInvalidValue, "server %q: \"command\" must name a program", r.s.Name)
	}
	r.s.Command, r.s.Args = cmd[0], cmd[1:]
	return nil
}

// transport reads "type" or "transport"; both may be there if they agree.
func (r *entryReader) transport(k member) error {
	d, v, name := r.d, k.val, r.s.Name
	t, err := d.str(v, name, k.name)
	if err == nil {
		t, err = d.transport(r.format, t, v, name, k.name)
	}
	if err == nil && r.typ != "" && t != r.typ {
		err = d.errAt(v.start, ErrInvalidValue, "server %q: %q says %s but \"type\" or \"transport\" already says %s", name, k.name, t, r.typ)
	}
	if err == nil {
		r.typ, r.typAt = t, v.start
	}
	return err
}

// unknown warns of a key the entry's format does not have.
func (r *entryReader) unknown(k member) {
	accepted := serverKeys
	if r.format == formatOpencode {
		accepted = opencodeKeys
	}
	msg := fmt.Sprintf("%s: server %q: unknown key %q ignored (accepted: %s)", r.d.where(k.keyStart), r.s.Name, k.name, strings.Join(accepted, ", "))
	if near := search.Suggest(k.name, accepted); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	*r.warnings = append(*r.warnings, msg)
}

// checkTransport sets s.Transport from command, url and type, or says why
// the entry has no transport mcpx can use.
func (d *doc) checkTransport(n *node, s *Server, name, typ string, typAt, urlAt int) *ParseError {
	switch {
	case s.Command != "" && s.URL != "":
		return d.errAt(n.start, ErrInvalidValue, "server %q: has both \"command\" and \"url\"; keep one", name)
	case s.Command != "":
		if typ != "" && typ != TransportStdio {
			return d.errAt(typAt, ErrInvalidValue, "server %q: transport %s needs a \"url\", not a \"command\"", name, typ)
		}
		s.Transport = TransportStdio
	case s.URL != "":
		if typ == TransportStdio {
			return d.errAt(typAt, ErrInvalidValue, "server %q: transport stdio needs a \"command\", not a \"url\"", name)
		}
		if u := strings.ToLower(s.URL); !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") && !strings.HasPrefix(u, "${") {
			return d.errAt(urlAt, ErrInvalidValue, "server %q: url: %q is not an http:// or https:// URL", name, s.URL)
		}
		s.Transport = TransportHTTP
		if typ == TransportSSE {
			s.Transport = TransportSSE
		}
	default:
		msg := fmt.Sprintf("server %q: needs a \"command\" (stdio) or a \"url\" (http, sse)", name)
		for _, k := range n.members {
			if hint, ok := otherURLKey(k.name); ok && !isNull(d, k.val) {
				msg += fmt.Sprintf("; %q is %s, write \"url\" here", k.name, hint)
				break
			}
		}
		return d.errAt(n.start, ErrInvalidValue, "%s", msg)
	}
	return nil
}

// otherURLKey names another host's spelling of a server's URL, for the
// message of an entry that has neither command nor url. A switch, not a
// map: a package-level map is built at init, in every process.
func otherURLKey(key string) (hint string, ok bool) {
	switch key {
	case "serverUrl":
		return "Windsurf's spelling", true
	case "httpUrl":
		return "Gemini CLI's spelling (streamable HTTP)", true
	}
	return "", false
}

// checkRefs finds the first ${...} in a value mcpx expands (command, args,
// env, cwd, url, headers) that is not a form mcpx knows: such text is never
// passed on literally.
func (d *doc) checkRefs(n *node, format, name string) *ParseError {
	check := func(v *node, key string) *ParseError {
		if v.kind != '"' {
			return nil
		}
		if bad := unknownRef(literalString(d.raw(v))); bad != "" {
			return d.errAt(v.start, ErrInvalidValue, "server %q: %s: %s is not a variable form mcpx knows (${VAR}, ${VAR:-default}, ${env:VAR}, ${input:ID}); write $${ for a literal ${", name, key, bad)
		}
		return nil
	}
	for _, k := range n.members {
		switch k.name {
		case "command", "args", "env", "cwd", "url", "headers", "environment":
		default:
			continue
		}
		v := k.val
		var pe *ParseError
		switch v.kind {
		case '"':
			pe = check(v, k.name)
		case '[':
			for i, el := range v.elems {
				if pe = check(el, fmt.Sprintf("%s[%d]", k.name, i)); pe != nil {
					break
				}
			}
		case '{':
			for _, el := range v.members {
				if pe = check(el.val, k.name+"."+el.name); pe != nil {
					break
				}
			}
		}
		if pe != nil {
			return pe
		}
	}
	return nil
}

// setProblem records pe as the Problem of s: "FILE:LINE:COL: what" (the
// server's name is said by whoever shows it), with a warning.
func (d *doc) setProblem(s *Server, pe *ParseError, warnings *[]string) {
	what := strings.TrimPrefix(pe.Msg, fmt.Sprintf("server %q: ", s.Name))
	s.Problem = fmt.Sprintf("%s:%d:%d: %s", pe.File, pe.Line, pe.Col, what)
	*warnings = append(*warnings, fmt.Sprintf("%s:%d:%d: server %q: %s; it is not started", pe.File, pe.Line, pe.Col, s.Name, what))
}

// transport maps a "type"/"transport" value to a Transport constant.
func (d *doc) transport(format, t string, v *node, server, key string) (string, error) {
	if format == formatOpencode {
		switch t {
		case "local":
			return TransportStdio, nil
		case "remote":
			return TransportHTTP, nil
		}
		return "", d.notAccepted(v, server, key, t, opencodeTypeVals)
	}
	switch t {
	case "stdio":
		return TransportStdio, nil
	case "http", "streamable-http", "streamableHttp":
		return TransportHTTP, nil
	case "sse":
		return TransportSSE, nil
	}
	return "", d.notAccepted(v, server, key, t, transportValues)
}

// parseBlock reads an `mcpx` block: a server's (server != "") or the
// top-level one. Unknown keys are errors.
func (d *doc) parseBlock(n *node, server string, top bool) (optLayer, error) {
	var l optLayer
	where := "the top-level mcpx block"
	accepted := topBlockKeys
	if !top {
		where = fmt.Sprintf("server %q: mcpx block", server)
		accepted = serverBlockKeys
	}
	if n.kind != '{' {
		return l, d.errAt(n.start, ErrType, "%s must be an object", where)
	}
	for _, k := range n.members {
		v := k.val
		if isNull(d, v) {
			continue
		}
		if !slices.Contains(accepted, k.name) {
			return l, d.unknownKey(k, where, accepted)
		}
		if err := d.parseBlockMember(k, server, &l); err != nil {
			return l, err
		}
	}
	return l, nil
}

// parseBlockMember reads member k of an mcpx block into l.
func (d *doc) parseBlockMember(k member, server string, l *optLayer) error {
	v := k.val
	key := "mcpx." + k.name
	var err error
	switch k.name {
	case "sharing":
		l.sharing, err = d.enum(v, server, key, sharingValues)
	case "scope":
		l.scope, err = d.enum(v, server, key, scopeValues)
	case "max":
		var x int
		if err = d.decode(v, server, key, "a whole number", &x); err == nil {
			if x < 1 {
				err = d.errAt(v.start, ErrInvalidValue, "%s: %d is not accepted (accepted: a whole number of at least 1)", d.subject(server, key), x)
			}
			l.max = &x
		}
	case "maxMessageBytes":
		var x int64
		if err = d.decode(v, server, key, "a whole number", &x); err == nil {
			if x < 1024 {
				err = d.errAt(v.start, ErrInvalidValue, "%s: %d is not accepted (accepted: a whole number of bytes, at least 1024)", d.subject(server, key), x)
			}
			l.maxMessage = &x
		}
	case "idleTimeout":
		l.idle, err = d.duration(v, server, key)
	case "callTimeout":
		l.call, err = d.duration(v, server, key)
	case "startTimeout":
		l.start, err = d.duration(v, server, key)
	case "idleExit":
		l.idleExit, err = d.duration(v, server, key)
	case "policy":
		err = d.parsePolicy(v, server, l)
	case "auth":
		l.auth, err = d.parseAuth(v, server)
	case "cache":
		err = d.parseCache(v, l)
	case "tools", "excludeTools":
		var pats []string
		if pats, err = d.patterns(v, server, key); err == nil {
			if k.name == "tools" {
				l.tools = &pats
			} else {
				l.exclude = &pats
			}
		}
	case "roots":
		var dirs []string
		if dirs, err = d.strList(v, server, key); err == nil {
			for i, dir := range dirs {
				if strings.TrimSpace(dir) == "" {
					err = d.errAt(v.elems[i].start, ErrInvalidValue, "%s: an empty path is not accepted (accepted: directories, relative to the entry's project directory or absolute)", d.subject(server, key))
					break
				}
			}
			l.roots = &dirs
		}
	case "description":
		var s string
		s, err = d.str(v, server, key)
		l.description = &s
	case "disabled":
		var b bool
		b, err = d.boolean(v, server, key)
		l.disabled = &b
	}
	return err
}

func (d *doc) parsePolicy(n *node, server string, l *optLayer) error {
	if n.kind != '{' {
		return d.errAt(n.start, ErrType, "%s: want an object", d.subject(server, "mcpx.policy"))
	}
	where := "mcpx.policy"
	if server != "" {
		where = fmt.Sprintf("server %q: mcpx.policy", server)
	}
	for _, k := range n.members {
		if isNull(d, k.val) {
			continue
		}
		var err error
		switch k.name {
		case "destructive":
			l.destructive, err = d.enum(k.val, server, "mcpx.policy.destructive", destructiveVals)
		case "unannotated":
			l.unannotated, err = d.enum(k.val, server, "mcpx.policy.unannotated", unannotatedVals)
		default:
			err = d.unknownKey(k, where, policyKeys)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// parseAuth reads a server's `mcpx.auth` block.
func (d *doc) parseAuth(n *node, server string) (*Auth, error) {
	if n.kind != '{' {
		return nil, d.errAt(n.start, ErrType, "%s: want an object", d.subject(server, "mcpx.auth"))
	}
	where := fmt.Sprintf("server %q: mcpx.auth", server)
	a := &Auth{}
	for _, k := range n.members {
		if isNull(d, k.val) {
			continue
		}
		key := "mcpx.auth." + k.name
		var err error
		switch k.name {
		case "clientId":
			a.ClientID, err = d.str(k.val, server, key)
		case "clientSecretEnv":
			if a.ClientSecretEnv, err = d.str(k.val, server, key); err == nil && !validVarName(a.ClientSecretEnv) {
				err = d.errAt(k.val.start, ErrInvalidValue, "%s: %q is not a variable name (write the name, not ${NAME} or the secret)", d.subject(server, key), a.ClientSecretEnv)
			}
		case "clientMetadataUrl":
			if a.ClientMetadataURL, err = d.str(k.val, server, key); err == nil {
				if u, perr := url.Parse(a.ClientMetadataURL); perr != nil || u.Scheme != "https" || u.Host == "" || u.Path == "" || u.Path == "/" {
					err = d.errAt(k.val.start, ErrInvalidValue, "%s: %q is not an https URL with a path", d.subject(server, key), a.ClientMetadataURL)
				}
			}
		case "scopes":
			a.Scopes, err = d.strList(k.val, server, key)
		default:
			err = d.unknownKey(k, where, authKeys)
		}
		if err != nil {
			return nil, err
		}
	}
	if a.ClientSecretEnv != "" && a.ClientID == "" {
		return nil, d.errAt(n.start, ErrInvalidValue, "%s: clientSecretEnv needs clientId", d.subject(server, "mcpx.auth"))
	}
	return a, nil
}

func (d *doc) parseCache(n *node, l *optLayer) error {
	if n.kind != '{' {
		return d.errAt(n.start, ErrType, "mcpx.cache: want an object")
	}
	for _, k := range n.members {
		if isNull(d, k.val) {
			continue
		}
		var err error
		switch k.name {
		case "maxBytes":
			var b int64
			if b, err = d.size(k.val, "mcpx.cache.maxBytes"); err == nil {
				l.cacheMaxBytes = &b
			}
		case "maxAge":
			l.cacheMaxAge, err = d.duration(k.val, "", "mcpx.cache.maxAge")
		default:
			err = d.unknownKey(k, "mcpx.cache", cacheKeys)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Value readers. Each reports a positioned error naming the server (if any)
// and the key.

func isNull(d *doc, n *node) bool { return n.kind == '0' && string(d.raw(n)) == "null" }

// subject is `server "x": key` or just `key`.
func (d *doc) subject(server, key string) string {
	if server == "" {
		return key
	}
	return fmt.Sprintf("server %q: %s", server, key)
}

func (d *doc) decode(n *node, server, key, want string, dst any) error {
	if err := json.Unmarshal(d.raw(n), dst); err != nil {
		return d.errAt(n.start, ErrType, "%s: want %s, not %s", d.subject(server, key), want, abbrev(d.raw(n)))
	}
	return nil
}

func (d *doc) str(n *node, server, key string) (string, error) {
	if n.kind != '"' {
		return "", d.errAt(n.start, ErrType, "%s: want a string, not %s", d.subject(server, key), abbrev(d.raw(n)))
	}
	return literalString(d.raw(n)), nil
}

func (d *doc) boolean(n *node, server, key string) (bool, error) {
	var b bool
	err := d.decode(n, server, key, "true or false", &b)
	return b, err
}

func (d *doc) strList(n *node, server, key string) ([]string, error) {
	if n.kind != '[' {
		return nil, d.errAt(n.start, ErrType, "%s: want an array of strings, not %s", d.subject(server, key), abbrev(d.raw(n)))
	}
	out := make([]string, 0, len(n.elems))
	for i, e := range n.elems {
		s, err := d.str(e, server, fmt.Sprintf("%s[%d]", key, i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

func (d *doc) strMap(n *node, server, key string) (map[string]string, error) {
	if n.kind != '{' {
		return nil, d.errAt(n.start, ErrType, "%s: want an object of strings, not %s", d.subject(server, key), abbrev(d.raw(n)))
	}
	out := make(map[string]string, len(n.members))
	for _, m := range n.members {
		s, err := d.str(m.val, server, key+"."+m.name)
		if err != nil {
			return nil, err
		}
		out[m.name] = s
	}
	return out, nil
}

func (d *doc) enum(n *node, server, key string, accepted []string) (*string, error) {
	s, err := d.str(n, server, key)
	if err != nil {
		return nil, err
	}
	if !slices.Contains(accepted, s) {
		return nil, d.notAccepted(n, server, key, s, accepted)
	}
	return &s, nil
}

func (d *doc) notAccepted(n *node, server, key, got string, accepted []string) error {
	msg := fmt.Sprintf("%s: %q is not accepted (accepted: %s)", d.subject(server, key), got, strings.Join(accepted, ", "))
	if near := search.Suggest(got, accepted); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return d.errAt(n.start, ErrInvalidValue, "%s", msg)
}

func (d *doc) unknownKey(k member, where string, accepted []string) error {
	msg := fmt.Sprintf("%s: unknown key %q (accepted: %s)", where, k.name, strings.Join(accepted, ", "))
	if near := search.Suggest(k.name, accepted); near != "" {
		msg += fmt.Sprintf("; did you mean %q?", near)
	}
	return d.errAt(k.keyStart, ErrUnknownKey, "%s", msg)
}

func (d *doc) duration(n *node, server, key string) (*Duration, error) {
	if n.kind != '"' && n.kind != '0' {
		return nil, d.errAt(n.start, ErrType, "%s: want a duration like \"30s\" or a number of seconds, not %s", d.subject(server, key), abbrev(d.raw(n)))
	}
	var v Duration
	if err := v.UnmarshalJSON(d.raw(n)); err != nil {
		kind := ErrInvalidValue
		if n.kind == '0' && !isNumber(d.raw(n)) {
			kind = ErrType
		}
		return nil, d.errAt(n.start, kind, "%s: %v", d.subject(server, key), err)
	}
	if v <= 0 {
		return nil, d.errAt(n.start, ErrInvalidValue, "%s: %s is not accepted (accepted: a positive duration)", d.subject(server, key), abbrev(d.raw(n)))
	}
	return &v, nil
}

func isNumber(b []byte) bool {
	var f float64
	return json.Unmarshal(b, &f) == nil
}

// size reads a byte count: a whole number, or a string with a unit ("512MiB",
// "2GB"; B, KB, MB, GB, TB powers of 1000, KiB, MiB, GiB, TiB powers of 1024).
func (d *doc) size(n *node, key string) (int64, error) {
	var out int64
	switch n.kind {
	case '0':
		if err := d.decode(n, "", key, "a whole number of bytes or a size like \"512MiB\"", &out); err != nil {
			return 0, err
		}
	case '"':
		s, _ := d.str(n, "", key)
		v, err := parseSize(s)
		if err != nil {
			return 0, d.errAt(n.start, ErrInvalidValue, "%s: %v", key, err)
		}
		out = v
	default:
		return 0, d.errAt(n.start, ErrType, "%s: want a whole number of bytes or a size like \"512MiB\", not %s", key, abbrev(d.raw(n)))
	}
	if out < 1 {
		return 0, d.errAt(n.start, ErrInvalidValue, "%s: %d is not accepted (accepted: a positive size)", key, out)
	}
	return out, nil
}

var sizeUnits = []struct {
	suffix string
	mult   float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

// parseSize parses "512MiB", "1.5GB", "100" (bytes).
func parseSize(s string) (int64, error) {
	num, mult := strings.TrimSpace(s), 1.0
	for _, u := range sizeUnits {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f*mult >= math.MaxInt64 || math.IsNaN(f) {
		return 0, fmt.Errorf("size %q: want a form like \"512MiB\" or \"2GB\"", s)
	}
	return int64(f * mult), nil
}

func (d *doc) patterns(n *node, server, key string) ([]string, error) {
	pats, err := d.strList(n, server, key)
	if err != nil {
		return nil, err
	}
	for i, p := range pats {
		if _, err := matchTool(p, ""); err != nil {
			return nil, d.errAt(n.elems[i].start, ErrInvalidValue, "%s: %v", d.subject(server, key), err)
		}
	}
	return pats, nil
}

// abbrev shows a JSON value in a message, shortened.
func abbrev(b []byte) string {
	s := strings.Join(strings.Fields(string(b)), " ")
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}
