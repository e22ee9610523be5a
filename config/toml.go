package config

import (
	"errors"

	"github.com/pelletier/go-toml/v2"
)

// decodeTOML decodes a TOML document (Codex's config.toml). A syntax error
// is a *ParseError with the line and column the parser reports.
func decodeTOML(path string, b []byte) (map[string]any, error) {
	var doc map[string]any
	if err := toml.Unmarshal(b, &doc); err != nil {
		var de *toml.DecodeError
		if errors.As(err, &de) {
			line, col := de.Position()
			return nil, &ParseError{File: path, Line: line, Col: col, Msg: de.Error(), Err: ErrSyntax}
		}
		return nil, &ParseError{File: path, Line: 1, Col: 1, Msg: err.Error(), Err: ErrSyntax}
	}
	return doc, nil
}
