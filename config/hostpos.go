package config

import (
	"fmt"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"

	"github.com/mcpx-dev/mcpx/config/hosts"
)

// placeProblems checks the entries a host's reader found (checkFilters) and
// prefixes the Problem of each with the FILE:LINE:COL of the value it is
// about (the entry itself when the key is not there), as mcpx's own files
// report theirs. src is the file's content, which decoded without error.
func placeProblems(hf *hosts.File, path string, src []byte, format hosts.Format) {
	checkFilters(hf)
	var find func(keys []string) (line, col int, ok bool)
	for i := range hf.Entries {
		e := &hf.Entries[i]
		if e.Problem == "" || e.At == nil {
			continue
		}
		if find == nil {
			find = positions(path, src, format)
		}
		keys := e.At
		if e.ProblemAt != "" {
			keys = append(keys[:len(keys):len(keys)], e.ProblemAt)
		}
		if line, col, ok := find(keys); ok {
			e.Problem = fmt.Sprintf("%s:%d:%d: %s", path, line, col, e.Problem)
		}
	}
}

// positions returns a lookup of the place of a value by its keys from the
// document's root: the nearest place it finds (a key missing from the
// entry gives the entry's place).
func positions(path string, src []byte, format hosts.Format) func([]string) (int, int, bool) {
	d := &doc{file: path, src: src}
	if format == hosts.TOML {
		offs := tomlOffsets(src)
		return func(keys []string) (int, int, bool) {
			for n := len(keys); n > 0; n-- {
				if off, ok := offs[strings.Join(keys[:n], "\x00")]; ok {
					line, col := d.pos(off)
					return line, col, true
				}
			}
			return 0, 0, false
		}
	}
	jd, err := parseJSONC(path, src)
	return func(keys []string) (int, int, bool) {
		if err != nil {
			return 0, 0, false
		}
		n, found := jd.root, false
		for _, k := range keys {
			next := memberVal(n, k)
			if next == nil {
				break
			}
			n, found = next, true
		}
		if !found {
			return 0, 0, false
		}
		line, col := jd.pos(n.start)
		return line, col, true
	}
}

// memberVal is the value of key in object n (the last one, as decoding takes
// it), or nil.
func memberVal(n *node, key string) *node {
	var v *node
	for _, m := range n.members {
		if m.name == key {
			v = m.val
		}
	}
	return v
}

// tomlOffsets maps every key path of a TOML document (parts joined by NUL)
// to the byte offset of its value, or of its name in a [table] header.
func tomlOffsets(src []byte) map[string]int {
	out := map[string]int{}
	var p unstable.Parser
	p.Reset(src)
	var table []string
	keyOf := func(it unstable.Iterator) (parts []string, last *unstable.Node) {
		for it.Next() {
			last = it.Node()
			parts = append(parts, string(last.Data))
		}
		return parts, last
	}
	var keyval func(prefix []string, n *unstable.Node)
	keyval = func(prefix []string, n *unstable.Node) {
		parts, _ := keyOf(n.Key())
		full := append(append([]string{}, prefix...), parts...)
		v := n.Value()
		off := int(v.Raw.Offset)
		if v.Raw.Length == 0 { // containers: the key's place
			k := n.Key()
			for k.Next() {
				off = int(k.Node().Raw.Offset)
			}
		}
		for i := len(prefix) + 1; i <= len(full); i++ {
			if _, seen := out[strings.Join(full[:i], "\x00")]; !seen {
				out[strings.Join(full[:i], "\x00")] = off
			}
		}
		if v.Kind == unstable.InlineTable {
			it := v.Children()
			for it.Next() {
				keyval(full, it.Node())
			}
		}
	}
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table, unstable.ArrayTable:
			parts, last := keyOf(n.Key())
			table = parts
			if last != nil {
				for i := 1; i <= len(parts); i++ {
					if _, seen := out[strings.Join(parts[:i], "\x00")]; !seen {
						out[strings.Join(parts[:i], "\x00")] = int(last.Raw.Offset)
					}
				}
			}
		case unstable.KeyValue:
			keyval(table, n)
		}
	}
	return out
}
