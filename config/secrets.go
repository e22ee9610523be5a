package config

import (
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// minSecret is the shortest value treated as a secret: shorter ones ("1",
// "on", a port) would blank out ordinary words of every message.
const minSecret = 4

// Secrets returns what must never appear in what the daemon says about s:
// the values lookup gives to the ${VAR} references of s's url, headers and
// env, and the credentials written there literally, with the forms they
// take inside a URL (path- and query-escaped), longest first.
//
// Redaction hides secrets, not paths:
//   - the values of the base variables (HOME, USER, PATH, PWD, TMPDIR,
//     XDG_*, LANG, LC_*, TZ, SHELL, ...) are never secrets: every path in
//     every message would read "[redacted]/proj/.mcp.json";
//   - a value expanded into a url or a header is always one (userinfo,
//     path, query, an Authorization header), as is the value of a
//     variable named like *TOKEN*, *KEY*, *SECRET* or *PASSWORD*, or put
//     into an env key named so;
//   - any other env value is one unless it is the absolute path of a file
//     or directory that exists on this machine.
//
// Written literally, an env value under a secret-like key, the password of
// the url, a query value under a secret-like parameter and the value of a
// credential header (Authorization, Cookie, a secret-like name) are
// secrets too, as is the value of the variable mcpx.auth.clientSecretEnv
// names. Values shorter than four bytes are left out. Command, args
// and cwd are not included: they hold paths, which redaction would mangle.
func (s *Server) Secrets(lookup func(string) (string, bool)) []string {
	var out []string
	add := func(v string) {
		if len(v) >= minSecret {
			out = append(out, v, url.PathEscape(v), url.QueryEscape(v))
		}
	}
	// refs adds the values of str's references; envKey is the env key str
	// is the value of ("" for the url and headers).
	refs := func(str, envKey string, always bool) {
		for _, r := range scanRefs(str) {
			if r.escape || isBaseVariable(r.name) {
				continue
			}
			v, ok := lookup(r.name)
			if !ok || len(v) < minSecret {
				continue
			}
			if always || secretLikeName(r.name) || secretLikeName(envKey) || !isExistingPath(v) {
				add(v)
			}
		}
	}
	refs(s.URL, "", true)
	literalURLSecrets(s.URL, add)
	for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
		v := s.Headers[k]
		refs(v, "", true)
		if credentialHeader(k) && !strings.Contains(v, "${") {
			add(v)
			if _, cred, ok := strings.Cut(v, " "); ok { // "Bearer TOKEN": the token alone too
				add(strings.TrimSpace(cred))
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		v := s.Env[k]
		refs(v, k, false)
		if secretLikeName(k) && !strings.Contains(v, "${") {
			add(v)
		}
	}
	if a := s.Options.Auth; a != nil && a.ClientSecretEnv != "" {
		if v, ok := lookup(a.ClientSecretEnv); ok {
			add(v) // the OAuth client's secret (mcpx.auth.clientSecretEnv)
		}
	}
	slices.SortFunc(out, longestFirst)
	return slices.Compact(out)
}

// literalURLSecrets adds the credentials written literally in rawURL: its
// password and the values of secret-like query parameters. Parts holding
// a ${VAR} reference are left to the references.
func literalURLSecrets(rawURL string, add func(string)) {
	if rawURL == "" {
		return
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return
	}
	if pw, ok := u.User.Password(); ok {
		if !strings.Contains(pw, "${") {
			add(pw)
		}
	} else if name := u.User.Username(); !strings.Contains(name, "${") {
		add(name) // https://TOKEN@host
	}
	for k, vs := range u.Query() {
		if !secretLikeName(k) {
			continue
		}
		for _, v := range vs {
			if !strings.Contains(v, "${") {
				add(v)
			}
		}
	}
}

// isBaseVariable reports whether name is one of the variables that
// describe the user and the machine rather than grant anything: their
// values show up in every path and message, and anyone on the machine
// can read them.
func isBaseVariable(name string) bool {
	switch name {
	case "HOME", "USER", "LOGNAME", "PATH", "PWD", "TMPDIR", "LANG", "TZ", "SHELL", "TERM":
		return true
	}
	return strings.HasPrefix(name, "XDG_") || strings.HasPrefix(name, "LC_")
}

// secretLikeName reports whether a variable, env key or query parameter
// is named like something that holds a credential.
func secretLikeName(name string) bool {
	n := strings.ToUpper(name)
	for _, w := range []string{"TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// credentialHeader reports whether a header carries credentials.
func credentialHeader(name string) bool {
	switch strings.ToLower(name) {
	case "authorization", "proxy-authorization", "cookie":
		return true
	}
	return secretLikeName(name) || strings.Contains(strings.ToUpper(name), "AUTH")
}

// isExistingPath reports whether v is the absolute path of something that
// exists on this machine: a file name is not a secret (the file's content
// may be, and never appears in a message).
func isExistingPath(v string) bool {
	if !filepath.IsAbs(v) {
		return false
	}
	_, err := os.Lstat(v)
	return err == nil
}

// longestFirst orders secrets longest first (so a secret is replaced
// before any shorter one inside it), equal ones side by side.
func longestFirst(a, b string) int {
	if len(a) != len(b) {
		return len(b) - len(a)
	}
	return strings.Compare(a, b)
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
	secrets = slices.Clone(secrets)
	slices.SortFunc(secrets, longestFirst)
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
