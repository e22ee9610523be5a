package config

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// ToolAllowed applies tools/excludeTools. Each pattern is a tool name, a
// shell glob (path.Match: *, ?, [...]) or a /regexp/ (Go syntax, unanchored:
// "/^get_/" to anchor). An empty Tools list allows every tool; ExcludeTools
// wins over Tools. Patterns are validated by Load, so a bad one here simply
// matches nothing.
func (o Options) ToolAllowed(name string) bool {
	if len(o.Tools) > 0 && !matchAny(o.Tools, name) {
		return false
	}
	return !matchAny(o.ExcludeTools, name)
}

func matchAny(patterns []string, name string) bool {
	for _, p := range patterns {
		if ok, _ := matchTool(p, name); ok {
			return true
		}
	}
	return false
}

// matchTool reports whether one pattern matches name; the error is a
// malformed glob or regexp.
func matchTool(pattern, name string) (bool, error) {
	if len(pattern) >= 2 && strings.HasPrefix(pattern, "/") && strings.HasSuffix(pattern, "/") {
		re, err := regexp.Compile(pattern[1 : len(pattern)-1])
		if err != nil {
			return false, fmt.Errorf("regexp %s: %w", pattern, err)
		}
		return re.MatchString(name), nil
	}
	ok, err := path.Match(pattern, name)
	if err != nil {
		return false, fmt.Errorf("glob %q: %w", pattern, err)
	}
	return ok, nil
}
