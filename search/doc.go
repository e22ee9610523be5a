// Package search is mcpx's tool search: it finds the tool an agent asks for
// in words ("open a ticket", "list the pods") among every cached tool.
//
// A tool is indexed as a document of fields (ParseTool, NewDoc): its name
// (split at _, -, . and camelCase), title, description, parameter names,
// parameter descriptions and enum values, and — shared by every tool of a
// server — the server's instructions and its own name and title
// (NewServerDoc). Words are lower-cased,
// stemmed (Porter) and stripped of common English words (Terms). The tools
// of one server form an Index; a query (ParseQuery) is ranked over one or
// more indexes as one collection (Rank) with BM25F: each field has its own
// weight and length normalisation, so a word in the name counts far more
// than one in a long parameter description. Each query word also matches
// the words the thesaurus (thesaurus.txt) says stand for it — "ticket"
// finds issues, "k8s" Kubernetes, "erase" delete — at a lower weight, and
// a tool whose name the query's words cover is preferred over one that
// only mentions them (a word that says a thing's state, "the merged PRs",
// "which issues are open", covers no name's verb, and a plural covers a
// name that ends in its singular less: "the PRs" are list_pull_requests'
// more than get_pull_request's); a question, or a request that names no action (its
// first word cannot be a verb: verbs.txt), prefers tools that look to
// tools that change something, and a request that names a server ("in
// notion") prefers that server's tools. Where a query's words are not the
// tools' own, the learned bridge (bridge.go) adds the words of tools' text
// that agents' requests with those words, alone or two near each other,
// went with. Explain says which words matched in which fields.
//
// The package is a leaf (the standard library and internal/lazy only) and
// does no work at init, so the CLI links it for its "did you mean"
// suggestions (Nearest, Suggest) at no cost to its start.
package search

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"sync"
)

// Field is a part of a tool's text that search indexes.
type Field uint8

const (
	FieldName         Field = iota // the tool's name, split into words
	FieldTitle                     // title, or annotations.title
	FieldDescription               // the tool's description
	FieldParam                     // parameter names (nested ones too)
	FieldParamDesc                 // parameter descriptions
	FieldEnum                      // the values a parameter's enum allows
	FieldInstructions              // the server's instructions, shared by its tools
	FieldServer                    // the server's own name and title (serverInfo), shared by its tools
	numFields
)

// String is the field's name as Explain's matches give it.
func (f Field) String() string {
	switch f {
	case FieldName:
		return "name"
	case FieldTitle:
		return "title"
	case FieldDescription:
		return "description"
	case FieldParam:
		return "parameter"
	case FieldParamDesc:
		return "parameter description"
	case FieldEnum:
		return "enum value"
	case FieldInstructions:
		return "server instructions"
	case FieldServer:
		return "server name"
	}
	return "unknown"
}

// Tool is what search reads of a tool definition.
type Tool struct {
	Name, Title, Description string
	Params                   []Param
}

// Param is one parameter of a tool's input schema (nested properties
// included).
type Param struct {
	Name, Description string
	Enum              []string // the string values of enum and const
}

// schema is the part of a JSON schema ParseTool reads.
type schema struct {
	Description string             `json:"description"`
	Enum        []json.RawMessage  `json:"enum"`
	Const       json.RawMessage    `json:"const"`
	Properties  map[string]*schema `json:"properties"`
	Items       json.RawMessage    `json:"items"` // a schema or, in old drafts, a list
	AnyOf       []*schema          `json:"anyOf"`
	OneOf       []*schema          `json:"oneOf"`
	AllOf       []*schema          `json:"allOf"`
}

// maxParams bounds the parameters read from one schema (some servers
// describe whole API bodies in theirs).
const maxParams = 200

// ParseTool reads a raw tool definition as tools/list sends it.
func ParseTool(def []byte) (Tool, error) {
	var raw struct {
		Name        string `json:"name"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Annotations struct {
			Title string `json:"title"`
		} `json:"annotations"`
		InputSchema *schema `json:"inputSchema"`
	}
	if err := json.Unmarshal(def, &raw); err != nil {
		return Tool{}, err
	}
	t := Tool{Name: raw.Name, Title: raw.Title, Description: raw.Description}
	if t.Title == "" {
		t.Title = raw.Annotations.Title
	}
	if raw.InputSchema != nil {
		t.Params = paramsOf(raw.InputSchema, t.Params, 0)
	}
	return t, nil
}

// paramsOf appends the properties of s (and of the schemas nested in
// them, a few levels deep) to ps, sorted by name at each level.
func paramsOf(s *schema, ps []Param, depth int) []Param {
	if depth > 3 || len(ps) >= maxParams {
		return ps
	}
	names := make([]string, 0, len(s.Properties))
	for name := range s.Properties {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		p := s.Properties[name]
		if p == nil || len(ps) >= maxParams {
			continue
		}
		param := Param{Name: name, Description: p.Description}
		param.Enum = enumOf(p, param.Enum, 0)
		ps = append(ps, param)
		ps = nestedParams(p, ps, depth+1)
	}
	return ps
}

// nestedParams adds the properties of the schemas s holds: an object's,
// an array's items', and those of its alternatives.
func nestedParams(s *schema, ps []Param, depth int) []Param {
	ps = paramsOf(s, ps, depth)
	if items := itemsOf(s); items != nil {
		ps = paramsOf(items, ps, depth)
	}
	for _, alts := range [][]*schema{s.AnyOf, s.OneOf, s.AllOf} {
		for _, a := range alts {
			if a != nil {
				ps = paramsOf(a, ps, depth)
			}
		}
	}
	return ps
}

// enumOf appends the string values s allows (enum, const, in its items
// and alternatives too).
func enumOf(s *schema, out []string, depth int) []string {
	if depth > 2 {
		return out
	}
	add := func(raw json.RawMessage) {
		var v string
		if json.Unmarshal(raw, &v) == nil && v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, v := range s.Enum {
		add(v)
	}
	if len(s.Const) > 0 {
		add(s.Const)
	}
	if items := itemsOf(s); items != nil {
		out = enumOf(items, out, depth+1)
	}
	for _, alts := range [][]*schema{s.AnyOf, s.OneOf} {
		for _, a := range alts {
			if a != nil {
				out = enumOf(a, out, depth+1)
			}
		}
	}
	return out
}

func itemsOf(s *schema) *schema {
	if len(s.Items) == 0 || s.Items[0] != '{' {
		return nil
	}
	var items schema
	if json.Unmarshal(s.Items, &items) != nil {
		return nil
	}
	return &items
}

// Doc is one tool's indexed text (or a server's, NewServerDoc): each term
// with how often it occurs in each field, and each field's length in
// terms. Build it once per tool definition (NewDoc); it is read-only
// after, safe to share.
type Doc struct {
	terms []docTerm // sorted by term
	lens  [numFields]uint16
	// single holds the positions in terms of the name's last word (its
	// head noun, as a rule) and of a phrase ending with it, when that word
	// is written in the singular (-1: none): get_pull_request's request
	// and pull request, not list_pull_requests' (plural) nor
	// get_resource_links' resource (a modifier, singular in any case).
	single [2]int16
	// verb is the position in terms of the name's verb: its first word
	// that is a verb tools' names use (isNameVerb), -1: none —
	// merge_pull_request's merge, not list_commits' commit.
	verb int16
	// conv holds the positions in terms of what the description says
	// the tool converts from and into, their last words (-1: none):
	// "Convert an address into geographic coordinates" from address into
	// coordinates (conversion).
	conv [2]int16
}

type docTerm struct {
	term string
	tf   [numFields]uint8 // occurrences per field, saturating at 255
}

// NewDoc indexes t.
func NewDoc(t Tool) *Doc {
	b := newDocBuilder()
	defer builders.Put(b)
	b.add(FieldName, t.Name)
	b.add(FieldTitle, t.Title)
	b.add(FieldDescription, t.Description)
	for _, p := range t.Params {
		b.add(FieldParam, p.Name)
		b.add(FieldParamDesc, p.Description)
		for _, e := range p.Enum {
			b.add(FieldEnum, e)
		}
	}
	return b.doc()
}

// Server is what search reads of a server, shared by all its tools: its
// own name and title (serverInfo) and its instructions.
type Server struct {
	Name, Title, Instructions string
}

// NewServerDoc indexes what a server says of itself, fields every tool of
// the server shares (NewIndex): its instructions, and its name and title
// without the words any server's name may have ("memory-server", "Slack
// MCP Server", "example-servers/postgres"), which say nothing of what it
// does. It is nil when the server says nothing else.
func NewServerDoc(s Server) *Doc {
	b := newDocBuilder()
	defer builders.Put(b)
	b.add(FieldInstructions, s.Instructions)
	b.add(FieldServer, ownWords(s.Name))
	b.add(FieldServer, ownWords(s.Title))
	d := b.doc()
	if len(d.terms) == 0 {
		return nil
	}
	return d
}

// ownWords is a server's name or title without the words that only say it
// is an MCP server.
func ownWords(name string) string {
	var keep []string
	for _, w := range words(name) {
		switch strings.ToLower(w) {
		case "server", "servers", "mcp", "example", "examples", "reference", "model", "context", "protocol":
			continue
		}
		keep = append(keep, w)
	}
	return strings.Join(keep, " ")
}

type docBuilder struct {
	th     *thesaurus
	single []string       // the terms of the name's last word, when it is singular (Doc.single)
	verb   string         // the name's verb (Doc.verb)
	conv   [2]string      // what the description converts from and into (Doc.conv)
	tf     map[string]int // term → its counts' index in counts
	counts [][numFields]uint8
	lens   [numFields]int
	tokens []token  // scratch
	terms  []string // scratch
}

// builders keeps docBuilders (their map and slices) for the next document:
// indexing 10,000 tools then leaves 10,000 documents behind, not 10,000
// maps of garbage among them.
var builders = sync.Pool{New: func() any {
	return &docBuilder{tf: map[string]int{}}
}}

func newDocBuilder() *docBuilder {
	b := builders.Get().(*docBuilder)
	b.th = builtin()
	clear(b.tf)
	b.single = b.single[:0]
	b.verb = ""
	b.conv = [2]string{}
	b.counts = b.counts[:0]
	b.lens = [numFields]int{}
	return b
}

// add counts the terms of text in field f, and as terms of their own (not
// counted in the length) the wholes of words written in parts and the
// thesaurus's phrases found among the terms.
func (b *docBuilder) add(f Field, text string) {
	if text == "" {
		return
	}
	if f == FieldDescription && b.conv[0] == "" {
		b.conv[0], b.conv[1] = conversion(text)
	}
	b.tokens = tokenize(text, b.tokens[:0])
	b.terms = b.terms[:0]
	lastWord := "" // as written
	for _, t := range b.tokens {
		if t.whole {
			b.count(t.term, f)
		} else {
			b.terms = append(b.terms, t.term)
			lastWord = t.written
		}
	}
	single := f == FieldName && lastWord != "" && !isPlural(lastWord) // a name that ends in the singular
	last := len(b.terms) - 1
	for i, t := range b.terms {
		b.count(t, f)
		if f == FieldName && b.verb == "" && isNameVerb(t) {
			b.verb = t
		}
		if single && i == last {
			b.single = append(b.single, t)
		}
		if n := b.th.phraseAt(b.terms, i); n > 0 {
			phrase := strings.Join(b.terms[i:i+n], " ")
			b.count(phrase, f)
			if single && i+n-1 == last {
				b.single = append(b.single, phrase)
			}
		}
	}
	b.lens[f] += len(b.terms)
}

func (b *docBuilder) count(t string, f Field) {
	i, ok := b.tf[t]
	if !ok {
		i = len(b.counts)
		b.tf[t] = i
		b.counts = append(b.counts, [numFields]uint8{})
	}
	if c := &b.counts[i]; c[f] < 255 {
		c[f]++
	}
}

func (b *docBuilder) doc() *Doc {
	d := &Doc{terms: make([]docTerm, 0, len(b.tf)), single: [2]int16{-1, -1}}
	for t, i := range b.tf {
		d.terms = append(d.terms, docTerm{t, b.counts[i]})
	}
	slices.SortFunc(d.terms, func(a, b docTerm) int { return strings.Compare(a.term, b.term) })
	for k, t := range b.single[:min(2, len(b.single))] {
		d.single[k] = d.position(t)
	}
	d.verb = d.position(b.verb)
	d.conv = [2]int16{d.position(b.conv[0]), d.position(b.conv[1])}
	for f, n := range b.lens {
		d.lens[f] = uint16(min(n, 65535))
	}
	return d
}

// position is the position of term in d.terms, or -1 ("" or past
// what an int16 holds).
func (d *Doc) position(term string) int16 {
	if term == "" {
		return -1
	}
	if i, ok := d.search(term); ok && i < math.MaxInt16 {
		return int16(i)
	}
	return -1
}

// conversion returns the terms of what a description says the tool
// converts from and into, the last word of each ("Convert an address into
// geographic coordinates": address, coordinates), or "", "": a sentence
// with a verb of conversion (convert, translate, transform), then
// what it converts, "into" or "to", and the result.
func conversion(desc string) (from, into string) {
	if !strings.Contains(desc, "onvert") && !strings.Contains(desc, "ranslat") && !strings.Contains(desc, "ransform") {
		return "", "" // most descriptions: nothing to split
	}
	for sentence := range strings.SplitSeq(desc, ".") {
		fields := strings.Fields(sentence)
		verb := slices.IndexFunc(fields, func(f string) bool { return isConversionVerb(normalWord(f)) })
		if verb < 0 {
			continue
		}
		for k := verb + 2; k < len(fields)-1; k++ {
			if w := normalWord(fields[k]); w != "into" && w != "to" {
				continue
			}
			from, into = lastTerm(fields[verb+1:k]), lastTerm(fields[k+1:])
			if from != "" && into != "" {
				return from, into
			}
			return "", ""
		}
	}
	return "", ""
}

func isConversionVerb(w string) bool {
	switch w {
	case "convert", "converts", "translate", "translates", "transform", "transforms":
		return true
	}
	return false
}

// lastTerm is the term of the last word of fields that search keeps, up
// to a clause's end (a comma: "into an address, using…").
func lastTerm(fields []string) string {
	last := ""
	for _, f := range fields {
		for _, t := range tokenize(f, nil) {
			if !t.whole {
				last = t.term
			}
		}
		if endsClause(f) {
			break
		}
	}
	return last
}

// find returns the counts of term in d, if d has it.
func (d *Doc) find(term string) (*[numFields]uint8, bool) {
	i, ok := d.search(term)
	if !ok {
		return nil, false
	}
	return &d.terms[i].tf, true
}

// search returns where term is, or would be, in d.terms, and whether it is.
func (d *Doc) search(term string) (int, bool) {
	return slices.BinarySearchFunc(d.terms, term, func(t docTerm, s string) int { return strings.Compare(t.term, s) })
}
