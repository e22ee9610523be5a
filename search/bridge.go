package search

import (
	_ "embed"
	"fmt"
	"strconv"
	"strings"
)

// The bridge (bridge.txt, embedded) is learned, not written: for a word
// of a request, the words of tools' own text that the tools agents wanted
// for it hold more often than chance, where the request's other words
// and their thesaurus entries do not already account for them ("bloat" →
// size). It is words to words, never to a tool, so it carries over to any
// server's tools. Its strengths are then corrected where they ranked a
// wrong tool first on the intents they were learned from (refineBridge,
// in refine_test.go). TestBridgeFile generates it from the studied intent
// sets (testdata/README.md) and the recorded tools, and checks that the
// committed file is what it generates (MCPX_SEARCH_BRIDGE=write rewrites
// it). A query word also matches its bridge words, each at weightBridge
// times the strength the file gives it: a weak signal, under the
// thesaurus's, which decides only where the words say little else. Two
// words near each other (pairSpan) are a key too ("child block"), with
// the few words they went with beyond either word alone
// (queryBuilder.addPairs).
//
// The file is read where it lies, a line per query term (bridgeFile).

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

// bridgeSource gives a query term's bridge words, strongest first (nil:
// none).
type bridgeSource interface {
	words(term string) []bridgeWord
}

// bridgeTable is a bridge held as a map: query term → its bridge words,
// strongest first (what the learner makes; tests put one in place of the
// file).
type bridgeTable map[string][]bridgeWord

func (b bridgeTable) words(term string) []bridgeWord { return b[term] }

// bridgeFile is a bridge in bridge.txt's format, searched where it lies:
// a query reads the few lines of its terms, so the bridge costs no parse
// and no memory beyond the binary's (parsing all of it took 11 ms and
// 5.4 MiB once two words in a row became keys).
type bridgeFile string

// bridge is where queries read their bridge words (a variable, so that
// tests can put another in its place).
var bridge bridgeSource = bridgeFile(bridgeText)

// words finds term's line by binary search (the file's lines are sorted
// by term, byte by byte, after its comment lines) and reads its words. A
// line that does not parse gives none: TestBridgeFile keeps the embedded
// file well-formed.
func (f bridgeFile) words(term string) []bridgeWord {
	text := string(f)
	for strings.HasPrefix(text, "#") {
		_, text, _ = strings.Cut(text, "\n")
	}
	lo, hi := 0, len(text) // offsets of line starts
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := strings.LastIndexByte(text[:mid], '\n') + 1
		line, _, _ := strings.Cut(text[start:], "\n")
		key, rest, _ := strings.Cut(line, "\t")
		switch {
		case key == term:
			ws, err := parseBridgeWords(rest)
			if err != nil {
				return nil
			}
			return ws
		case key < term:
			lo = start + len(line) + 1
		default:
			hi = start
		}
	}
	return nil
}

// ErrBridge is the kind of every error reading a bridge file.
var ErrBridge error = bridgeError{}

// bridgeError is ErrBridge's type: a value, so that declaring it is no
// work at init.
type bridgeError struct{}

func (bridgeError) Error() string { return "bad bridge" }

// parseBridgeWords reads what follows a term on a line of the bridge
// format: tab-separated "term written strength" triples, strongest first.
func parseBridgeWords(fields string) ([]bridgeWord, error) {
	if fields == "" {
		return nil, fmt.Errorf("%w: want at least one bridge word", ErrBridge)
	}
	words := make([]bridgeWord, 0, strings.Count(fields, "\t")+1)
	for f := range strings.SplitSeq(fields, "\t") {
		term, rest, ok1 := strings.Cut(f, " ")
		written, strength, ok2 := strings.Cut(rest, " ")
		if !ok1 || !ok2 || strings.Contains(strength, " ") {
			return nil, fmt.Errorf("%w: want \"term written strength\"", ErrBridge)
		}
		s, err := strconv.ParseFloat(strength, 64)
		if err != nil || s <= 0 || s > 1 {
			return nil, fmt.Errorf("%w: a strength is a number in (0, 1]", ErrBridge)
		}
		words = append(words, bridgeWord{term, written, s})
	}
	return words, nil
}
