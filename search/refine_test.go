package search

import (
	"fmt"
	"slices"
	"testing"
)

// refineBridge corrects b's strengths, in place, where they rank a wrong
// tool first on the intents b was learned from, in p.refine passes over
// them. The counts behind b say which words go with a query word; they do
// not say which of those words tell its answers from the tools beside
// them ("helm" → custom, valuesfile, override: words of
// install_helm_chart's and upgrade_helm_chart's parameters, which ranked
// both over uninstall_helm_chart for "helm uninstall redis -n cache";
// 0.55 → 0.30 after this). So, as a perceptron does, for each intent
// whose first tool is wrong, each of the query's bridge words that the
// first right tool holds and the wrong one does not gains p.refineStep,
// and each the wrong one holds and the right one does not loses it.
// Where the first tool is right but the second, a wrong one, scores
// within p.refineMargin of it, the second is corrected against in the
// same way, so that a pass leaves a margin rather than a tie. A strength
// stays in [0, 1] and within p.refineReach of what the counts gave it: a
// frequent key meets hundreds of corrections, and unbounded they carried
// a word of the benchmark's example values far ("acme" → per, 0.17 →
// 0.92). Strengths are rounded as bridge.txt writes them; a word at 0 is
// dropped.
func refineBridge(c *corpus, b bridgeTable, intents []intent, p bridgeParams) {
	defer setBridge(b)()
	indexes := c.indexes()
	type place struct{ ix, doc int }
	where := map[string]place{}
	for i, ix := range indexes {
		for d := range ix.docs {
			where[c.name(i, d)] = place{i, d}
		}
	}
	holds := func(tool, term string) bool {
		at, ok := where[tool]
		return ok && len(matchFields(indexes[at.ix], indexes[at.ix].docs[at.doc], term)) > 0
	}
	counted := map[keyWord]float64{} // each word's strength from the counts, which a correction moves at most p.refineReach from
	for k, ws := range b {
		for _, w := range ws {
			counted[keyWord{k, w.term}] = w.strength
		}
	}
	for range p.refine {
		for _, in := range intents {
			q := ParseQuery(in.query)
			right, wrong := correction(c, Rank(indexes, q, 10, c.tie), in.want, p.refineMargin)
			if wrong == "" {
				continue
			}
			for _, con := range q.concepts {
				key := con.alts[0].term
				for i, w := range b[key] {
					if !slices.ContainsFunc(con.alts, func(a alt) bool { return a.learned && a.term == w.term }) {
						continue // left out of this query (a pair's verb of the other kind, or the thesaurus has it)
					}
					b[key][i].strength = corrected(w.strength, counted[keyWord{key, w.term}], holds(right, w.term), holds(wrong, w.term), p)
				}
			}
		}
	}
	for k, ws := range b {
		for i := range ws {
			ws[i].strength = roundStrength(ws[i].strength)
		}
		ws = slices.DeleteFunc(ws, func(w bridgeWord) bool { return w.strength <= 0 })
		sortBridgeWords(ws)
		if len(ws) == 0 {
			delete(b, k)
			continue
		}
		b[k] = ws
	}
}

// corrected is a bridge word's strength s after one correction: up by
// p.refineStep if the right tool holds the word and the wrong one not,
// down if the other way round, never beyond [0, 1] nor further than
// p.refineReach from its strength from the counts.
func corrected(s, counted float64, right, wrong bool, p bridgeParams) float64 {
	switch {
	case right && !wrong:
		return min(1, counted+p.refineReach, s+p.refineStep)
	case wrong && !right:
		return max(0, counted-p.refineReach, s-p.refineStep)
	}
	return s
}

// correction names the right tool an intent's ranking (hits) should have
// put higher and the wrong one it put above it: the first wrong tool and
// the first right one (want's first if none is in hits); or, where the
// first is right, the second if it is wrong and scores within margin of
// the first. wrong is "" when there is nothing to correct.
func correction(c *corpus, hits []Hit, want []string, margin float64) (right, wrong string) {
	if len(hits) == 0 {
		return "", ""
	}
	first := c.name(hits[0].Index, hits[0].Doc)
	if slices.Contains(want, first) {
		if len(hits) < 2 || hits[1].Score < (1-margin)*hits[0].Score {
			return "", ""
		}
		if second := c.name(hits[1].Index, hits[1].Doc); !slices.Contains(want, second) {
			return first, second
		}
		return "", ""
	}
	right = want[0]
	for _, h := range hits {
		if n := c.name(h.Index, h.Doc); slices.Contains(want, n) {
			right = n
			break
		}
	}
	return right, first
}

// TestRefineBridge: where a bridge word lifts a wrong tool over the one
// its intent wants, a pass of refineBridge lowers the word the wrong
// tool holds and raises the one the right tool holds, until the right
// tool is first by the margin; a word both hold, or neither, keeps its
// strength; and passes once the margin is there change nothing.
func TestRefineBridge(t *testing.T) {
	c := &corpus{servers: []recorded{{Namespace: "toy", parsed: []Tool{
		{Name: "grow_volume", Description: "Grows a volume of the store."},
		{Name: "show_usage", Description: "Shows the usage of the store."},
		{Name: "list_snapshots", Description: "Lists the snapshots."},
	}}}}
	b := bridgeTable{"swell": {
		{stem("usage"), "usage", 0.8},
		{stem("store"), "store", 0.5},
		{stem("volume"), "volume", 0.3},
		{stem("snapshots"), "snapshots", 0.2},
	}}
	intents := []intent{{query: "the swelling", want: []string{"toy.grow_volume"}}}
	first := func() string {
		defer setBridge(b)()
		hits := Rank(c.indexes(), ParseQuery(intents[0].query), 10, c.tie)
		return c.name(hits[0].Index, hits[0].Doc)
	}
	if got := first(); got != "toy.show_usage" {
		t.Fatalf("before refining, %q ranks %s first, want toy.show_usage (the test's premise)", intents[0].query, got)
	}
	p := defaultBridgeParams
	p.refine, p.refineReach = 20, 1
	refineBridge(c, b, intents, p)
	if got := first(); got != "toy.grow_volume" {
		t.Fatalf("after refining, %q ranks %s first, want toy.grow_volume; bridge %v", intents[0].query, got, b["swell"])
	}
	strength := func() map[string]float64 {
		s := map[string]float64{}
		for _, w := range b["swell"] {
			s[w.written] = w.strength
		}
		return s
	}
	s := strength()
	if s["usage"] >= 0.8 || s["volume"] <= 0.3 {
		t.Errorf("usage %v (was 0.8), volume %v (was 0.3): want usage lowered, volume raised", s["usage"], s["volume"])
	}
	if s["store"] != 0.5 || s["snapshots"] != 0.2 {
		t.Errorf("store %v, snapshots %v: a word both tools hold (0.5) or neither (0.2) changed", s["store"], s["snapshots"])
	}
	settled := fmt.Sprint(b)
	refineBridge(c, b, intents, p)
	if fmt.Sprint(b) != settled {
		t.Errorf("passes with the right tool first by the margin changed the bridge: %v, was %s", b, settled)
	}

	// Within reach of the counts: 0.8 - 0.1 and 0.3 + 0.1 at most.
	b["swell"] = []bridgeWord{{stem("usage"), "usage", 0.8}, {stem("volume"), "volume", 0.3}}
	p.refineReach = 0.1
	refineBridge(c, b, intents, p)
	if s := strength(); s["usage"] != 0.7 || s["volume"] != 0.4 {
		t.Errorf("with reach 0.1, usage %v (want 0.7), volume %v (want 0.4)", s["usage"], s["volume"])
	}
}
