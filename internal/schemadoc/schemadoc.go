// Package schemadoc reads JSON Schema documents decoded into map[string]any,
// the way both the daemon (typing key=value arguments) and the CLI (tool
// help, TypeScript) read them: objects, local $refs and declared types. It
// validates nothing (the daemon's JSON-Schema library does) and links no
// schema library, so the CLI can use it.
package schemadoc

import (
	"net/url"
	"strings"
)

// Object is v as a schema object (nil when it is not one).
func Object(v any) map[string]any { m, _ := v.(map[string]any); return m }

// Resolve follows a local "$ref" ("#/$defs/X", "#/definitions/X") from
// root, a few levels deep; anything else, and a reference that leads
// nowhere, is returned as is.
func Resolve(root, s map[string]any) map[string]any {
	for range 8 {
		ref, ok := s["$ref"].(string)
		if !ok || !strings.HasPrefix(ref, "#/") {
			return s
		}
		var cur any = root
		for _, tok := range strings.Split(ref[2:], "/") {
			tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
			if u, err := url.PathUnescape(tok); err == nil {
				tok = u
			}
			cur = Object(cur)[tok]
		}
		next := Object(cur)
		if next == nil {
			return s
		}
		s = next
	}
	return s
}

// Declared is the types s names in "type" (a string or an array of them).
func Declared(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var types []string
		for _, v := range t {
			if str, ok := v.(string); ok {
				types = append(types, str)
			}
		}
		return types
	}
	return nil
}

// Types is Declared, or when s declares none, what its keywords imply:
// "object" for properties or additionalProperties, "array" for items or
// prefixItems; nil when nothing says.
func Types(s map[string]any) []string {
	if types := Declared(s); len(types) > 0 {
		return types
	}
	switch {
	case s["properties"] != nil || s["additionalProperties"] != nil:
		return []string{"object"}
	case s["items"] != nil || s["prefixItems"] != nil:
		return []string{"array"}
	}
	return nil
}
