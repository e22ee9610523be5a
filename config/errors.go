package config

import (
	"errors"
	"fmt"
	"strings"
)

// Error kinds, testable with errors.Is on the error Load returns.
var (
	// ErrSyntax: the file is not valid JSONC.
	ErrSyntax = errors.New("syntax error")
	// ErrType: a value has the wrong JSON type ("args": 5).
	ErrType = errors.New("wrong type")
	// ErrInvalidValue: a value of the right type that is not accepted
	// (an unknown sharing mode, a negative duration, a server with
	// neither command nor url, ...).
	ErrInvalidValue = errors.New("invalid value")
	// ErrUnknownKey: a key inside an `mcpx` block that mcpx does not know.
	ErrUnknownKey = errors.New("unknown key")
)

// ParseError is a config file that does not parse, or a value in it that is
// not accepted. Error() is "FILE:LINE:COL: message". Line and Col are
// 1-based; Col counts characters (Unicode code points), not bytes, so it
// matches what editors show. Err is the kind (ErrSyntax, ErrType,
// ErrInvalidValue, ErrUnknownKey) and is reachable with errors.Is.
type ParseError struct {
	File string
	Line int
	Col  int
	Msg  string
	Err  error
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
}

// Unwrap returns the kind.
func (e *ParseError) Unwrap() error { return e.Err }

// UnsetVarError is a ${VAR} the caller's environment does not define.
type UnsetVarError struct {
	Server string
	Var    string
}

func (e *UnsetVarError) Error() string {
	if id, ok := strings.CutPrefix(e.Var, "input:"); ok {
		return fmt.Sprintf("server %q needs the value of input %q (${input:%s}); run mcpx on a terminal to be asked for it", e.Server, id, id)
	}
	return fmt.Sprintf("server %q: environment variable %s is not set", e.Server, e.Var)
}
