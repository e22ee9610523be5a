package search

// Index is the inverted index of one set of tools (one server's, as a
// daemon view allows them): per term, the tools whose document has it. A
// query then touches only the tools that share a word with it. Build it
// once (NewIndex); it is read-only after, safe for concurrent Rank calls.
type Index struct {
	docs     []*Doc
	server   *Doc               // the server's instructions (nil: none)
	total    [numFields]float64 // per field, the sum of the documents' lengths
	postings map[string][]posting
}

type posting struct {
	doc int32 // index into docs
	tf  [numFields]uint8
}

// NewIndex indexes docs (their order is the order Hit.Doc refers to);
// server is the server's instructions (NewServerDoc), or nil.
func NewIndex(docs []*Doc, server *Doc) *Index {
	ix := &Index{docs: docs, postings: map[string][]posting{}}
	if server != nil && len(server.terms) > 0 {
		ix.server = server
	}
	for i, d := range docs {
		for f, n := range d.lens {
			ix.total[f] += float64(n)
		}
		if ix.server != nil {
			ix.total[FieldInstructions] += float64(ix.server.lens[FieldInstructions])
		}
		for _, t := range d.terms {
			ix.postings[t.term] = append(ix.postings[t.term], posting{int32(i), t.tf})
		}
	}
	return ix
}

// Len is the number of tools indexed.
func (ix *Index) Len() int { return len(ix.docs) }

// df is how many of ix's tools have term in some field (every tool, when
// the server's instructions have it).
func (ix *Index) df(term string) int {
	if ix.server != nil {
		if _, ok := ix.server.find(term); ok {
			return len(ix.docs)
		}
	}
	return len(ix.postings[term])
}
