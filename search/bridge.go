package search

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpx-dev/mcpx/internal/lazy"
)

// The bridge (bridge.txt, embedded) is learned, not written: for a word
// of a request, the words of tools' own text that the tools agents wanted
// for it hold more often than chance, where the request's other words
// and their thesaurus entries do not already account for them ("bloat" →
// size). It is words to words, never to a tool, so it carries over to any
// server's tools. TestBridgeFile generates it from the studied intent
// sets (testdata/README.md) and the recorded tools, and checks that the
// committed file is what it generates (MCPX_SEARCH_BRIDGE=write rewrites
// it). A query word also matches its bridge words, each at weightBridge
// times the strength the file gives it: a weak signal, under the
// thesaurus's, which decides only where the words say little else.
//
// The file is parsed on first use, never at init.

//go:embed bridge.txt
var bridgeText string

// weightBridge scales a bridge word's strength (0–1) into the weight of
// its match, relative to the query's own word; chosen by cross-validation
// across the sets it learns from (TestBridgeCrossValidate). 1.2 since the
// learner stopped learning words of other tools' names (MRR@10 over the
// fifteen folds 0.801 at 0.8, 0.810 at 1, flat 0.812–0.813 from 1.1 to
// 1.3; with twelve words a term, 0.815 at 1, 0.817 at 1.2, 0.814 at 1.5;
// over 21 folds with bridge sums, 0.807 at 1, 0.810 at 1.2, 0.807 at 1.5):
// a strong bridge word may outweigh a query word, but seven in eight are
// 0.5 or weaker, under the thesaurus's related words (0.7).
var weightBridge = 1.2

// bridgeWord is one word a query term leads to through the bridge.
type bridgeWord struct {
	term     string  // as documents index it
	written  string  // as tools write it, for the why of a match
	strength float64 // 0–1: how much more than chance it goes with the query's term
}

// bridgeTable is a parsed bridge.txt: query term → its bridge words,
// strongest first.
type bridgeTable map[string][]bridgeWord

// bridge is the embedded bridge, parsed on first use, with nothing run at
// package init (a variable, so that tests can put another in its place).
var bridge = &lazy.Value[bridgeTable]{New: embeddedBridge}

// embeddedBridge parses bridge.txt.
func embeddedBridge() bridgeTable {
	b, err := parseBridge(bridgeText)
	if err != nil {
		// The embedded file is checked by TestBridgeFile; a build whose
		// data is broken must not rank silently without it.
		panic(err)
	}
	return b
}

// ErrBridge is the kind of every error reading a bridge file.
var ErrBridge error = bridgeError{}

// bridgeError is ErrBridge's type: a value, so that declaring it is no
// work at init.
type bridgeError struct{}

func (bridgeError) Error() string { return "bad bridge" }

// parseBridge reads the bridge format, one query term a line ("#" starts
// a comment line): the term, then tab-separated "term written strength"
// triples, strongest first.
func parseBridge(text string) (bridgeTable, error) {
	b := bridgeTable{}
	for n, line := range strings.Split(text, "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		fields := strings.Split(line, "\t")
		if len(fields) < 2 || fields[0] == "" {
			return nil, errBridgeLine(n, "want a term and at least one bridge word")
		}
		words := make([]bridgeWord, 0, len(fields)-1)
		for _, f := range fields[1:] {
			parts := strings.Split(f, " ")
			if len(parts) != 3 {
				return nil, errBridgeLine(n, "want \"term written strength\"")
			}
			s, err := strconv.ParseFloat(parts[2], 64)
			if err != nil || s <= 0 || s > 1 {
				return nil, errBridgeLine(n, "a strength is a number in (0, 1]")
			}
			words = append(words, bridgeWord{parts[0], parts[1], s})
		}
		if _, dup := b[fields[0]]; dup {
			return nil, errBridgeLine(n, "a term given twice")
		}
		b[fields[0]] = words
	}
	return b, nil
}

func errBridgeLine(n int, problem string) error {
	return fmt.Errorf("%w: line %d: %s", ErrBridge, n+1, problem)
}

// bridgeWritten is how tools write term, a bridge word of the query term
// from ("" if none).
func bridgeWritten(from, term string) string {
	for _, bw := range bridge.Get()[from] {
		if bw.term == term {
			return bw.written
		}
	}
	return ""
}
