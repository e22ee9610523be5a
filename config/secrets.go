package config

import (
	"maps"
	"net/url"
	"slices"
	"strings"
)

// minSecret is the shortest expanded value treated as a secret: shorter
// ones ("1", "on", a port) would blank out ordinary words of every message.
const minSecret = 4

// Secrets returns the values lookup gives to the ${VAR} references of s's
// url, headers and env values (what carries tokens), with the forms they
// take inside a URL (path- and query-escaped), longest first. Values
// shorter than four bytes are left out. Command, args and cwd are not
// included: they hold paths, which redaction would mangle.
func (s *Server) Secrets(lookup func(string) (string, bool)) []string {
	strs := []string{s.URL}
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		strs = append(strs, s.Headers[k])
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		strs = append(strs, s.Env[k])
	}
	var out []string
	for _, str := range strs {
		for _, r := range scanRefs(str) {
			if r.escape {
				continue
			}
			v, ok := lookup(r.name)
			if !ok || len(v) < minSecret {
				continue
			}
			out = append(out, v, url.PathEscape(v), url.QueryEscape(v))
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return slices.Compact(out)
}

// Redactor replaces secrets in text with "[redacted]". The zero value
// redacts nothing. Safe for concurrent use.
type Redactor struct {
	r *strings.Replacer
}

// NewRedactor redacts every string of secrets (longest first, as Secrets
// returns them).
func NewRedactor(secrets []string) Redactor {
	if len(secrets) == 0 {
		return Redactor{}
	}
	slices.SortStableFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	pairs := make([]string, 0, 2*len(secrets))
	for _, s := range slices.Compact(secrets) {
		pairs = append(pairs, s, "[redacted]")
	}
	return Redactor{r: strings.NewReplacer(pairs...)}
}

// String returns s with every secret replaced.
func (r Redactor) String(s string) string {
	if r.r == nil {
		return s
	}
	return r.r.Replace(s)
}
