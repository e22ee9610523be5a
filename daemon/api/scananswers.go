package api

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// The answers of `mcpx ls`, `mcpx search` and `mcpx schema` are read like
// a call's (scan.go): by a reader of their known shapes, falling back to
// encoding/json for anything else, with the same result (fuzz tests in
// scan_test.go). encoding/json builds each struct type's field table by
// reflection on first use, which cost a warm `mcpx ls` a fifth of its
// instructions, and decoding 500 namespaces took 14 million more.

// DecodeNamespaces decodes the answer of GET /v1/namespaces, as
// json.Unmarshal would. Strings share data's memory.
func DecodeNamespaces(data []byte) (*NamespacesResponse, error) {
	r, _, err := decodeKnown(data, readNamespacesResponse)
	return r, err
}

// DecodeTools decodes the answer of GET /v1/tools and /v1/schema, as
// json.Unmarshal would. Strings and definitions share data's memory.
func DecodeTools(data []byte) (*ToolsResponse, error) {
	r, _, err := decodeKnown(data, readToolsResponse)
	return r, err
}

// DecodeSearch decodes the answer of GET /v1/search, as json.Unmarshal
// would. Strings share data's memory.
func DecodeSearch(data []byte) (*SearchResponse, error) {
	r, _, err := decodeKnown(data, readSearchResponse)
	return r, err
}

// once returns a visit that hands each of fields to visit once: a
// repeated field (encoding/json merges it into what the first one
// decoded) is encoding/json's to read. Other keys go to visit as they
// come.
func once(fields []string, visit func(key, v string) error) func(key, v string) error {
	var seen uint64
	return func(key, v string) error {
		for i, f := range fields {
			if f == key {
				if seen&(1<<i) != 0 {
					return errOtherShape
				}
				seen |= 1 << i
				break
			}
		}
		return visit(key, v)
	}
}

var (
	namespacesFields = []string{"namespaces", "unavailableSources"}
	namespaceFields  = []string{"name", "description", "transport", "sharing", "scope", "serverHash", "source", "tools", "live", "replaced", "exitsAfterAnswer", "state", "error", "stderr", "fetchedAt"}
	toolsFields      = []string{"namespace", "tools"}
	toolFields       = []string{"namespace", "name", "description", "annotations", "definition"}
	hitFields        = []string{"namespace", "name", "description", "annotations", "definition", "score", "why"}
	matchFields      = []string{"word", "via", "fields"}
	searchFields     = []string{"query", "results", "unread", "unreadMore", "untrusted"}
)

func readNamespacesResponse(s string, r *NamespacesResponse) error {
	return members(s, once(namespacesFields, func(key, v string) error {
		switch key {
		case "namespaces":
			r.Namespaces = []Namespace{}
			return elements(v, func(item string) error {
				r.Namespaces = append(r.Namespaces, Namespace{})
				return readNamespace(item, &r.Namespaces[len(r.Namespaces)-1])
			})
		case "unavailableSources":
			return json.Unmarshal([]byte(v), &r.Unavailable)
		}
		return unknownKey(key, namespacesFields...)
	}))
}

func readNamespace(s string, n *Namespace) error {
	return members(s, once(namespaceFields, func(key, v string) error {
		switch key {
		case "name":
			return readString(v, &n.Name)
		case "description":
			return readString(v, &n.Description)
		case "transport":
			return readString(v, &n.Transport)
		case "sharing":
			return readString(v, &n.Sharing)
		case "scope":
			return readString(v, &n.Scope)
		case "serverHash":
			return readString(v, &n.ServerHash)
		case "source":
			return readString(v, &n.Source)
		case "tools":
			return readInt(v, &n.Tools)
		case "live":
			return readInt(v, &n.Live)
		case "replaced":
			return readInt(v, &n.Replaced)
		case "exitsAfterAnswer":
			return readBool(v, &n.ExitsAfterAnswer)
		case "state":
			return readString(v, &n.State)
		case "error":
			return readString(v, &n.Error)
		case "stderr":
			return readString(v, &n.Stderr)
		case "fetchedAt":
			if v == "" || v[0] != '"' {
				return errOtherShape
			}
			var t time.Time
			if err := t.UnmarshalJSON([]byte(v)); err != nil {
				return err
			}
			n.FetchedAt = &t
			return nil
		}
		return unknownKey(key, namespaceFields...)
	}))
}

func readToolsResponse(s string, r *ToolsResponse) error {
	return members(s, once(toolsFields, func(key, v string) error {
		switch key {
		case "namespace":
			return readNamespace(v, &r.Namespace)
		case "tools":
			r.Tools = []Tool{}
			return elements(v, func(item string) error {
				r.Tools = append(r.Tools, Tool{})
				t := &r.Tools[len(r.Tools)-1]
				return members(item, once(toolFields, func(key, v string) error { return readToolMember(key, v, t) }))
			})
		}
		return unknownKey(key, toolsFields...)
	}))
}

// readToolMember reads one member of a Tool object.
func readToolMember(key, v string, t *Tool) error {
	switch key {
	case "namespace":
		return readString(v, &t.Namespace)
	case "name":
		return readString(v, &t.Name)
	case "description":
		return readString(v, &t.Description)
	case "annotations":
		t.Annotations = rawOf(v)
		return nil
	case "definition":
		t.Definition = rawOf(v)
		return nil
	}
	return unknownKey(key, toolFields...)
}

func readSearchResponse(s string, r *SearchResponse) error {
	return members(s, once(searchFields, func(key, v string) error {
		switch key {
		case "query":
			return readString(v, &r.Query)
		case "results":
			r.Results = []SearchHit{}
			return elements(v, func(item string) error {
				r.Results = append(r.Results, SearchHit{})
				h := &r.Results[len(r.Results)-1]
				return members(item, once(hitFields, func(key, v string) error {
					switch {
					case key == "score":
						return readFloat(v, &h.Score)
					case key == "why":
						return readMatches(v, &h.Why)
					case strings.EqualFold(key, "score") || strings.EqualFold(key, "why"):
						return errOtherShape
					}
					return readToolMember(key, v, &h.Tool)
				}))
			})
		case "unread":
			r.Unread = []string{}
			return elements(v, func(item string) error {
				r.Unread = append(r.Unread, "")
				return readString(item, &r.Unread[len(r.Unread)-1])
			})
		case "unreadMore":
			return readInt(v, &r.UnreadMore)
		case "untrusted":
			return readInt(v, &r.Untrusted)
		}
		return unknownKey(key, searchFields...)
	}))
}

// readMatches reads a search hit's why.
func readMatches(s string, why *[]SearchMatch) error {
	*why = []SearchMatch{}
	return elements(s, func(item string) error {
		*why = append(*why, SearchMatch{})
		m := &(*why)[len(*why)-1]
		return members(item, once(matchFields, func(key, v string) error {
			switch key {
			case "word":
				return readString(v, &m.Word)
			case "via":
				return readString(v, &m.Via)
			case "fields":
				m.Fields = []string{}
				return elements(v, func(f string) error {
					m.Fields = append(m.Fields, "")
					return readString(f, &m.Fields[len(m.Fields)-1])
				})
			}
			return unknownKey(key, matchFields...)
		}))
	})
}

// readInt reads a JSON integer that fits an int; anything else (null, a
// fraction, an exponent) is encoding/json's to read or refuse.
func readInt(v string, n *int) error {
	i, err := strconv.Atoi(v)
	if err != nil || v[0] == '+' || (len(v) > 1 && v[0] == '0') || strings.HasPrefix(v, "-0") {
		return errOtherShape
	}
	*n = i
	return nil
}

// readFloat reads a JSON number as encoding/json does into a float64.
func readFloat(v string, f *float64) error {
	if v == "" || (v[0] != '-' && (v[0] < '0' || v[0] > '9')) {
		return errOtherShape
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return errOtherShape
	}
	*f = x
	return nil
}

// DecodeCallRequest decodes the body of POST /v1/call, as json.Unmarshal
// would: the daemon decodes one per call, and encoding/json's reflection
// was 9 % of its CPU in a call loop. Arguments share data's memory.
func DecodeCallRequest(data []byte) (*CallRequest, error) {
	r, _, err := decodeKnown(data, readCallRequest)
	return r, err
}

var (
	callRequestFields = []string{"namespace", "tool", "arguments", "pairs", "noValidate", "raw", "stream", "noStatus", "session", "cwd", "confirmed", "task", "detach", "elicit", "sample", "roots", "relay"}
	argPairFields     = []string{"key", "value", "json"}
)

func readCallRequest(s string, r *CallRequest) error {
	return members(s, once(callRequestFields, func(key, v string) error {
		switch key {
		case "namespace":
			return readString(v, &r.Namespace)
		case "tool":
			return readString(v, &r.Tool)
		case "arguments":
			r.Arguments = rawOf(v)
			return nil
		case "pairs":
			r.Pairs = []ArgPair{}
			return elements(v, func(item string) error {
				r.Pairs = append(r.Pairs, ArgPair{})
				p := &r.Pairs[len(r.Pairs)-1]
				return members(item, once(argPairFields, func(key, v string) error {
					switch key {
					case "key":
						return readString(v, &p.Key)
					case "value":
						return readString(v, &p.Value)
					case "json":
						return readBool(v, &p.JSON)
					}
					return unknownKey(key, argPairFields...)
				}))
			})
		case "noValidate":
			return readBool(v, &r.NoValidate)
		case "raw":
			return readBool(v, &r.Raw)
		case "stream":
			return readBool(v, &r.Stream)
		case "noStatus":
			return readBool(v, &r.NoStatus)
		case "session":
			return readString(v, &r.Session)
		case "cwd":
			return readString(v, &r.Cwd)
		case "confirmed":
			return readBool(v, &r.Confirmed)
		case "task":
			return readBool(v, &r.Task)
		case "detach":
			return readBool(v, &r.Detach)
		case "elicit":
			return readString(v, &r.Elicit)
		case "sample":
			return readBool(v, &r.Sample)
		case "roots":
			return readBool(v, &r.Roots)
		case "relay":
			return readBool(v, &r.Relay)
		}
		return unknownKey(key, callRequestFields...)
	}))
}
