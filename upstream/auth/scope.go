package auth

import (
	"fmt"
	"slices"
	"strings"
)

// InsufficientScopeError is a request the server refused with 403 and a
// Bearer challenge of error="insufficient_scope" (RFC 6750 §3.1): the
// login lacks a scope the request needs. A new login asks for Scope (the
// scopes the login held with those challenged added: SEP-2350's union),
// which the Manager remembers for the server until that login. Futile
// means a new login would not help (Why says why), so none is suggested.
type InsufficientScopeError struct {
	Server     string
	Challenged string // the scope of the challenge (may be "")
	Scope      string // what a new login asks for
	Futile     bool
	Why        ScopeFutility
}

// ScopeFutility says why a new login would not get a challenged scope.
type ScopeFutility int

const (
	// ScopeUseful: a new login asking for the scope may get it.
	ScopeUseful ScopeFutility = iota
	// ScopeUnnamed: the challenge names no scope.
	ScopeUnnamed
	// ScopeHeld: the login already holds every challenged scope.
	ScopeHeld
	// ScopeDenied: the last login asked for the scope and the
	// authorization server did not grant it.
	ScopeDenied
)

func (e *InsufficientScopeError) Error() string {
	switch e.Why {
	case ScopeUnnamed:
		return fmt.Sprintf("server %s refused the request for want of a scope it does not name (403 insufficient_scope)", e.Server)
	case ScopeHeld:
		return fmt.Sprintf("server %s refused the request for want of the scope %s, which its login already holds", e.Server, e.Challenged)
	case ScopeDenied:
		return fmt.Sprintf("server %s needs the scope %s, which its authorization server did not grant when the last login asked for it", e.Server, e.Challenged)
	}
	return fmt.Sprintf("server %s needs the scope %s, which its login does not hold", e.Server, e.Challenged)
}

// scopeUnion joins space-separated scope lists (RFC 6749 §3.3) into one,
// each scope once, in the order first seen.
func scopeUnion(lists ...string) string {
	var out []string
	for _, l := range lists {
		for _, s := range strings.Fields(l) {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return strings.Join(out, " ")
}

// scopeCovers reports whether held has every scope of want.
func scopeCovers(held, want string) bool {
	have := strings.Fields(held)
	for _, s := range strings.Fields(want) {
		if !slices.Contains(have, s) {
			return false
		}
	}
	return true
}

// scopeMinus is the scopes of a that b lacks.
func scopeMinus(a, b string) string {
	have := strings.Fields(b)
	var out []string
	for _, s := range strings.Fields(a) {
		if !slices.Contains(have, s) && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}
