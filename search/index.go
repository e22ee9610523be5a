package search

import "slices"

// Index is the inverted index of one set of tools (one server's, as a
// daemon view allows them): per term, the tools whose document has it. A
// query then touches only the tools that share a word with it. Build it
// once (NewIndex); it is read-only after, safe for concurrent Rank calls.
type Index struct {
	docs     []*Doc
	nameLen  []uint16           // per document, its name's length in terms (side by side: every query reads them)
	writes   []int32            // the documents whose names say they change something (isWriteVerb)
	server   *Doc               // the server's instructions, name and title (nil: none)
	total    [numFields]float64 // per field, the sum of the documents' lengths
	postings map[string][]posting
}

// posting is one tool that has a term: its BM25F weight of the term
// (rank.go) and whether the name has it.
type posting struct {
	doc    int32 // index into docs
	weight float32
	inName bool
	single bool // the name's last word is the term, in the singular (Doc.single)
	verb   bool // the term is the name's verb (Doc.verb)
	conv   conv // the term is what the description converts from or into (Doc.conv)
}

// conv says whether a term is what a tool converts from (convFrom) or
// into (convInto), per its description (Doc.conv).
type conv uint8

const (
	convFrom conv = 1 << iota
	convInto
)

// convOf is the conv of d's k-th term.
func (d *Doc) convOf(k int) conv {
	var c conv
	if int(d.conv[0]) == k {
		c |= convFrom
	}
	if int(d.conv[1]) == k {
		c |= convInto
	}
	return c
}

// NewIndex indexes docs (their order is the order Hit.Doc refers to);
// server is what the server says of itself (NewServerDoc), or nil.
func NewIndex(docs []*Doc, server *Doc) *Index {
	ix := &Index{docs: docs, nameLen: make([]uint16, len(docs)), postings: map[string][]posting{}}
	if server != nil && len(server.terms) > 0 {
		ix.server = server
	}
	for i, d := range docs {
		ix.nameLen[i] = d.lens[FieldName]
		for f, n := range d.lens {
			ix.total[f] += float64(n)
		}
		if ix.server != nil {
			for f := FieldInstructions; f < numFields; f++ {
				ix.total[f] += float64(ix.server.lens[f])
			}
		}
	}
	// Each term's weight in each tool is computed here, once: field
	// lengths are normalised by this set's averages (one server's tools
	// against each other, and against lengthPrior typical tools), so a
	// query only sums what the postings hold. The server's own fields are
	// normalised when a query runs, over the servers it searches.
	var avg [FieldInstructions]float64
	for f := range avg {
		avg[f] = max((ix.total[f]+lengthPrior*typicalLen[f])/(float64(len(docs))+lengthPrior), 1)
	}
	for i, d := range docs {
		if slices.ContainsFunc(d.terms, func(t docTerm) bool { return t.tf[FieldName] != 0 && isWriteVerb(t.term) }) {
			ix.writes = append(ix.writes, int32(i))
		}
		for k, t := range d.terms {
			var w float64
			for f := FieldName; f < FieldInstructions; f++ {
				if t.tf[f] != 0 {
					w += fieldNorm(f, t.tf[f], d.lens[f], avg[f])
				}
			}
			ix.postings[t.term] = append(ix.postings[t.term], posting{int32(i), float32(w), t.tf[FieldName] != 0, d.isSingle(k), int(d.verb) == k, d.convOf(k)})
		}
	}
	return ix
}

// typicalLen is a typical tool's length in terms, per field of its own:
// the mean over the 171 tools recorded in testdata/tools.
var typicalLen = [FieldInstructions]float64{
	FieldName:        2.6,
	FieldTitle:       1.3,
	FieldDescription: 10.9,
	FieldParam:       4.8,
	FieldParamDesc:   17.9,
	FieldEnum:        1.2,
}

// lengthPrior is how many tools of typicalLen a server's average length
// counts beside its own tools'. A server of one tool (sequential-thinking,
// one description of 237 distinct words) has no other tool to be long
// against: its average alone would be its own length, and no text of its
// would count as long. With it, a server of a few tools is measured mostly
// against a typical tool, one of dozens mostly against its own.
// Cross-validated (21 folds, with fieldB as it was then): MRR@10 0.836
// at 0, 0.838 at 2, 0.840 at 4 and 8, 0.841 at 16, 0.840 at 1,000.
var lengthPrior = 8.0

// Len is the number of tools indexed.
func (ix *Index) Len() int { return len(ix.docs) }

// df is how many of ix's tools have term in some field (every tool, when
// the server's instructions or name have it).
func (ix *Index) df(term string) int {
	if ix.server != nil {
		if _, ok := ix.server.find(term); ok {
			return len(ix.docs)
		}
	}
	return len(ix.postings[term])
}

// isSingle reports whether d's k-th term is its name's last word, or a
// phrase ending with it, written in the singular (Doc.single).
func (d *Doc) isSingle(k int) bool {
	return int(d.single[0]) == k || int(d.single[1]) == k
}
