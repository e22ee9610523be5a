package config

import (
	"cmp"
	"maps"
	"slices"
)

// UntrustedSuffix marks the row of an untrusted file's entry whose name a
// trusted file also defines: the trusted server keeps the name (and stays
// callable as NAME.TOOL), and `ls` shows the untrusted one beside it as
// "NAME (untrusted)" until the user trusts or removes its file.
const UntrustedSuffix = " (untrusted)"

// merger merges entries per server name, nearest first (DESIGN §2):
// the nearest entry from a trusted file wins the name, and an untrusted
// file's entry is inert — it never replaces, disables or changes a trusted
// one, wherever it is. Only the nearest untrusted entry that is nearer than
// the trusted one is kept, to be shown as a row of its own.
type merger struct {
	trusted   map[string]entry // nearest trusted entry per name
	untrusted map[string]entry // nearest untrusted entry nearer than any trusted one
}

// add takes the next entry of name, in order from nearest to farthest. It
// reports the source of the nearer entry that shadows e, if one does.
func (m *merger) add(name string, e entry) (by string, shadowed bool) {
	if t, ok := m.trusted[name]; ok {
		return t.source, true
	}
	if e.server.Untrusted == "" {
		m.trusted[name] = e
		return "", false
	}
	if u, ok := m.untrusted[name]; ok {
		return u.source, true
	}
	m.untrusted[name] = e
	return "", false
}

// row is one server of the merged configuration.
type row struct {
	name  string
	entry entry
}

// rows are the merged servers, sorted by name: each name's trusted entry
// unless it is disabled, and its untrusted entry — under the same name when
// no trusted server has it, else as "NAME (untrusted)". An untrusted
// tombstone (disabled) is shown only beside the trusted server it would
// remove. hidden lists untrusted entries that could not be shown because
// another server already has the annotated name.
func (m *merger) rows() (rows []row, hidden []Shadow) {
	names := slices.Sorted(maps.Keys(m.trusted))
	for name := range m.untrusted {
		if _, ok := m.trusted[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	taken := func(n string) bool {
		_, t := m.trusted[n]
		_, u := m.untrusted[n]
		return t || u
	}
	for _, name := range names {
		t, hasT := m.trusted[name]
		live := hasT && !t.disabled()
		if live {
			rows = append(rows, row{name, t})
		}
		u, hasU := m.untrusted[name]
		if !hasU || (u.disabled() && !live) {
			continue
		}
		if !live {
			rows = append(rows, row{name, u})
			continue
		}
		if alt := name + UntrustedSuffix; !taken(alt) {
			rows = append(rows, row{alt, u})
		} else {
			hidden = append(hidden, Shadow{Name: name, Source: u.source, By: t.source})
		}
	}
	slices.SortFunc(rows, func(a, b row) int { return cmp.Compare(a.name, b.name) })
	return rows, hidden
}

// disabled reports whether the entry is a tombstone ("disabled": true, or
// a host's own off switch).
func (e entry) disabled() bool { return e.layer.disabled != nil && *e.layer.disabled }
