package config

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/mcpx-dev/mcpx/config/hosts"
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
	_, ok := firstMatch(patterns, name)
	return ok
}

// firstMatch returns the first of patterns that matches name.
func firstMatch(patterns []string, name string) (string, bool) {
	for _, p := range patterns {
		if ok, _ := matchTool(p, name); ok {
			return p, true
		}
	}
	return "", false
}

// HiddenTool is why a server's tool filter hides a tool.
type HiddenTool struct {
	// Key is the filter's key as Source spells it ("mcpx.excludeTools",
	// Windsurf's "disabledTools", Codex's "enabled_tools", ...).
	Key string
	// Source is the file that holds it.
	Source string
	// Pattern is the pattern of an exclusion list that matches the tool;
	// "" when the tool is hidden because an allow list does not name it.
	Pattern string
}

// HiddenBy reports which of s's tool filters hides tool (as ToolAllowed
// decides: the exclusion list first), or false when tool is not hidden.
func (s *Server) HiddenBy(tool string) (HiddenTool, bool) {
	toolsKey, excludeKey := hosts.MCPXToolsKey, hosts.MCPXExcludeToolsKey
	if h := hosts.ByName(s.Host); h != nil && s.Source != "" && h.Format(s.Source) != hosts.MCPX {
		toolsKey, excludeKey = h.ToolsKey, h.ExcludeToolsKey
	}
	if p, ok := firstMatch(s.Options.ExcludeTools, tool); ok {
		return HiddenTool{Key: excludeKey, Source: s.Source, Pattern: p}, true
	}
	if len(s.Options.Tools) > 0 && !matchAny(s.Options.Tools, tool) {
		return HiddenTool{Key: toolsKey, Source: s.Source}, true
	}
	return HiddenTool{}, false
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
