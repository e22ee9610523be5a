package config

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// Variable references, expanded in command, args, env values, cwd, url and
// header values (nowhere else, and never in names or keys):
//
//	${VAR}           the caller's VAR; unset is an *UnsetVarError
//	${VAR:-default}  VAR when set and not empty, else default (no error)
//	${env:VAR}       VS Code's spelling of ${VAR}
//	${input:ID}      a VS Code input: asked of the user by the CLI and kept
//	                 in the captured environment under "input:ID"
//	$${              a literal "${" (the only escape; a lone $ is literal)
//
// VAR is [A-Za-z_][A-Za-z0-9_]*. Any other "${...}" in a file read by
// mcpx's own parser makes the entry unusable (see unknownRef): it is never
// passed on literally. A "${" without a closing "}" is literal.

// ref is one ${...} reference found in a string.
type ref struct {
	start, end int // span of the whole reference in the string
	name       string
	def        string
	hasDef     bool
	escape     bool // $${ → ${
}

// scanRefs finds the references in s, in order.
func scanRefs(s string) []ref {
	var out []ref
	for i := 0; i < len(s); i++ {
		if s[i] != '$' {
			continue
		}
		if strings.HasPrefix(s[i:], "$${") {
			out = append(out, ref{start: i, end: i + 3, escape: true})
			i += 2
			continue
		}
		if !strings.HasPrefix(s[i:], "${") {
			continue
		}
		close := strings.IndexByte(s[i+2:], '}')
		if close < 0 {
			break
		}
		body := s[i+2 : i+2+close]
		if id, ok := strings.CutPrefix(body, "input:"); ok && validInputID(id) {
			out = append(out, ref{start: i, end: i + 2 + close + 1, name: body})
			i += 2 + close
			continue
		}
		body = strings.TrimPrefix(body, "env:")
		name, def, hasDef := strings.Cut(body, ":-")
		if !validVarName(name) {
			continue
		}
		out = append(out, ref{start: i, end: i + 2 + close + 1, name: name, def: def, hasDef: hasDef})
		i += 2 + close
	}
	return out
}

// validInputID is the ID of a VS Code input variable, ${input:ID}.
func validInputID(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || c == '.' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

func validVarName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// expandString replaces the references in s; the error names the first unset
// variable (without the server, which the caller adds).
func expandString(s string, lookup func(string) (string, bool)) (string, string) {
	refs := scanRefs(s)
	if len(refs) == 0 {
		return s, ""
	}
	var b strings.Builder
	last := 0
	for _, r := range refs {
		b.WriteString(s[last:r.start])
		last = r.end
		if r.escape {
			b.WriteString("${")
			continue
		}
		v, ok := lookup(r.name)
		switch {
		case r.hasDef && (!ok || v == ""):
			b.WriteString(r.def)
		case !ok:
			return "", r.name
		default:
			b.WriteString(v)
		}
	}
	b.WriteString(s[last:])
	return b.String(), ""
}

// expandable lists the strings of s that may hold references.
func (s *Server) expandable() []string {
	out := []string{s.Command, s.Cwd, s.URL}
	out = append(out, s.Args...)
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		out = append(out, s.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		out = append(out, s.Headers[k])
	}
	return out
}

// Vars returns the variables the server references (including those with a
// default, and mcpx.auth.clientSecretEnv), sorted and deduplicated.
func (s *Server) Vars() []string {
	var out []string
	if a := s.Options.Auth; a != nil && a.ClientSecretEnv != "" {
		out = append(out, a.ClientSecretEnv)
	}
	for _, str := range s.expandable() {
		for _, r := range scanRefs(str) {
			if !r.escape {
				out = append(out, r.name)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Expand returns a copy with every ${VAR} replaced from lookup (the caller's
// environment, never the daemon's). An unset variable is an *UnsetVarError
// naming it and the server. A relative cwd is then made relative to the
// server's project directory (Dir). Raw is kept as
// written, so the copy hashes like the original.
func (s *Server) Expand(lookup func(string) (string, bool)) (*Server, error) {
	c := *s
	c.Args = slices.Clone(s.Args)
	c.Env = maps.Clone(s.Env)
	c.Headers = maps.Clone(s.Headers)
	c.Options.Tools = slices.Clone(s.Options.Tools)
	c.Options.ExcludeTools = slices.Clone(s.Options.ExcludeTools)
	var unset string
	exp := func(v string) string {
		if unset != "" {
			return v
		}
		out, missing := expandString(v, lookup)
		if missing != "" {
			unset = missing
			return v
		}
		return out
	}
	c.Command = exp(c.Command)
	for i := range c.Args {
		c.Args[i] = exp(c.Args[i])
	}
	for _, k := range slices.Sorted(maps.Keys(c.Env)) {
		c.Env[k] = exp(c.Env[k])
	}
	c.Cwd = exp(c.Cwd)
	c.URL = exp(c.URL)
	for _, k := range slices.Sorted(maps.Keys(c.Headers)) {
		c.Headers[k] = exp(c.Headers[k])
	}
	if a := s.Options.Auth; a != nil {
		ca := *a
		ca.Scopes = slices.Clone(a.Scopes)
		if a.ClientSecretEnv != "" && unset == "" {
			v, ok := lookup(a.ClientSecretEnv)
			if !ok || v == "" {
				unset = a.ClientSecretEnv
			}
			ca.ClientSecret = v
		}
		c.Options.Auth = &ca
	}
	if unset != "" {
		return nil, &UnsetVarError{Server: s.Name, Var: unset}
	}
	if c.Cwd != "" && !filepath.IsAbs(c.Cwd) {
		base := s.Dir
		if base == "" && s.Source != "" {
			base = filepath.Dir(s.Source)
		}
		if base != "" {
			c.Cwd = filepath.Join(base, c.Cwd)
		}
	}
	return &c, nil
}

// unknownRef returns the first "${...}" of s that is not a reference mcpx
// expands (nor the $${ escape), or "". A "${" never closed is literal.
func unknownRef(s string) string {
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "$${"):
			i += 2
		case strings.HasPrefix(s[i:], "${"):
			close := strings.IndexByte(s[i+2:], '}')
			if close < 0 {
				return ""
			}
			body := s[i+2 : i+2+close]
			if !knownRef(body) {
				return s[i : i+2+close+1]
			}
			i += 2 + close
		}
	}
	return ""
}

// knownRef reports whether body, the text between "${" and "}", is a form
// scanRefs expands.
func knownRef(body string) bool {
	if id, ok := strings.CutPrefix(body, "input:"); ok && validInputID(id) {
		return true
	}
	name, _, _ := strings.Cut(strings.TrimPrefix(body, "env:"), ":-")
	return validVarName(name)
}
