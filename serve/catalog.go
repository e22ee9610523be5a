package serve

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mcpx-dev/mcpx/cache"
	"github.com/mcpx-dev/mcpx/config"
)

// catalog is what serve offers, read from the schema cache alone: it never
// asks the daemon and never starts a server, so hosts see every cached tool
// even while the daemon is stopped.
type catalog struct {
	schemaHash config.SchemaHash
	tools      []entry // in namespace order, then the server's order
	resources  []entry
	templates  []entry
	prompts    []entry
	unread     []string // namespaces with no usable snapshot and no recorded failure
	// served is every namespace served, in order: admitted by the filter,
	// trusted and usable, read or not.
	served []string
	// snaps is the snapshot each namespace was served from, by server
	// hash (build's prev).
	snaps map[config.ServerHash]*cache.Snapshot
	// hashes is each served namespace's server hash.
	hashes map[string]config.ServerHash
}

// snapshotOf is the snapshot ns is served from, or nil.
func (c *catalog) snapshotOf(ns string) *cache.Snapshot {
	return c.snaps[c.hashes[ns]]
}

// entry is one served item: its name (or URI) as hosts see it, where it
// comes from, and its definition as the server sent it.
type entry struct {
	served string // tool/prompt name, or resource URI / URI template
	ns     string
	name   string // the server's own tool/prompt name, resource URI or template
	def    json.RawMessage
}

// build reads the snapshot of every namespace in cfg that nsFilter admits
// (nil admits all). A namespace whose snapshot is gone (the daemon drops it
// when the server says its lists changed, and reads them again) is served
// from prev's until the new one is there, so hosts do not see it vanish and
// come back; it is still listed as unread. Calls, reads and prompts go
// through the daemon, which decides on fresh lists.
func build(cfg *config.Config, schemas *cache.Schemas, nsFilter map[string]bool, prev *catalog) *catalog {
	c := &catalog{schemaHash: cfg.SchemaHash(), snaps: map[config.ServerHash]*cache.Snapshot{}, hashes: map[string]config.ServerHash{}}
	used := map[string]bool{}
	for _, ns := range cfg.Names() {
		if nsFilter != nil && !nsFilter[ns] {
			continue
		}
		s := cfg.Servers[ns]
		if s.Untrusted != "" || s.Problem != "" {
			// Not served, and not read in the background: a server from a
			// file the user has not trusted never starts (docs/serve.md).
			continue
		}
		c.served = append(c.served, ns)
		c.hashes[ns] = s.Hash()
		snap, err := schemas.Load(s.Hash())
		if err != nil || snap.Error != "" {
			var miss *cache.MissError
			if snap != nil || !errors.As(err, &miss) {
				continue
			}
			c.unread = append(c.unread, ns)
			if prev == nil || prev.snaps[s.Hash()] == nil {
				continue
			}
			snap = prev.snaps[s.Hash()]
		}
		c.snaps[s.Hash()] = snap
		c.addEntries(ns, s, snap, used)
	}
	return c
}

// addEntries adds the tools (those s allows), prompts, resources and
// resource templates of namespace ns's snapshot; used holds the tool names
// served so far.
func (c *catalog) addEntries(ns string, s *config.Server, snap *cache.Snapshot, used map[string]bool) {
	for _, raw := range snap.Tools {
		var head struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &head) != nil || head.Name == "" || !s.Options.ToolAllowed(head.Name) {
			continue
		}
		c.tools = append(c.tools, entry{served: uniqueName(toolName(ns, head.Name), used), ns: ns, name: head.Name, def: raw})
	}
	for _, raw := range snap.Prompts {
		var head struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &head) != nil || head.Name == "" {
			continue
		}
		c.prompts = append(c.prompts, entry{served: ns + "." + head.Name, ns: ns, name: head.Name, def: raw})
	}
	for _, raw := range snap.Resources {
		var head struct {
			URI string `json:"uri"`
		}
		if json.Unmarshal(raw, &head) != nil || head.URI == "" {
			continue
		}
		c.resources = append(c.resources, entry{served: resourceURI(ns, head.URI), ns: ns, name: head.URI, def: raw})
	}
	for _, raw := range snap.ResourceTemplates {
		var head struct {
			URITemplate string `json:"uriTemplate"`
		}
		if json.Unmarshal(raw, &head) != nil || head.URITemplate == "" {
			continue
		}
		c.templates = append(c.templates, entry{served: resourceURI(ns, head.URITemplate), ns: ns, name: head.URITemplate, def: raw})
	}
}

// digest identifies a list, so serve tells hosts about changes only when
// there are some.
func digest(list []entry) string {
	h := sha256.New()
	for _, e := range list {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", e.served, e.ns, e.def)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// toolName is the name hosts see for ns's tool: NS.TOOL where both parts
// keep to the characters MCP allows in tool names (letters, digits, "_",
// "-" and "."); any other character becomes "_", and the whole is cut to
// 128 characters.
func toolName(ns, tool string) string {
	clean := func(s string) string {
		return strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-', r == '.':
				return r
			}
			return '_'
		}, s)
	}
	name := clean(ns) + "." + clean(tool)
	if len(name) > maxToolName {
		name = name[:maxToolName]
	}
	return name
}

// maxToolName is MCP's limit on a tool name's length.
const maxToolName = 128

// uniqueName returns name, or name with "_2", "_3"… when an earlier tool
// already took it (two names that differ only in characters MCP forbids).
func uniqueName(name string, used map[string]bool) string {
	out := name
	for n := 2; used[out]; n++ {
		suffix := fmt.Sprintf("_%d", n)
		base := name
		if len(base)+len(suffix) > maxToolName {
			base = base[:maxToolName-len(suffix)]
		}
		out = base + suffix
	}
	used[out] = true
	return out
}

// resourceURI namespaces a server's resource URI (or URI template):
// mcpx://NS/ followed by the URI exactly as the server wrote it.
func resourceURI(ns, uri string) string { return uriPrefix + ns + "/" + uri }

const uriPrefix = "mcpx://"

// splitResourceURI undoes resourceURI.
func splitResourceURI(served string) (ns, uri string, ok bool) {
	rest, ok := strings.CutPrefix(served, uriPrefix)
	if !ok {
		return "", "", false
	}
	ns, uri, ok = strings.Cut(rest, "/")
	return ns, uri, ok && ns != "" && uri != ""
}

// find looks a served name up in list.
func find(list []entry, served string) (entry, bool) {
	for _, e := range list {
		if e.served == served {
			return e, true
		}
	}
	return entry{}, false
}
