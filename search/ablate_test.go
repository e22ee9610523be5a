package search

import (
	"os"
	"testing"
)

// TestAblate measures the ranker with one rule off at a time, on the
// development and unseen intents, aggregates only: a rule stays if the
// development set does not lose by it and the unseen set does not fall
// (MCPX_SEARCH_ABLATE=1; =base prints the ranker as it is, alone).
func TestAblate(t *testing.T) {
	if os.Getenv("MCPX_SEARCH_ABLATE") == "" {
		t.Skip("MCPX_SEARCH_ABLATE=1 runs it")
	}
	c := loadCorpus(t)
	dev, unseen := loadIntents(t, "dev"), loadIntents(t, "unseen")
	row := func(name string) {
		r := mcpxRanker(c)
		d, u := evaluate(r, dev), evaluate(r, unseen)
		t.Logf("| %-28s | %.2f | %.2f | %.3f | %.2f | %.2f | %.3f |", name, d.r1, d.r5, d.mrr, u.r1, u.r5, u.mrr)
	}
	set := func(p *float64, v float64) func() {
		keep := *p
		*p = v
		return func() { *p = keep }
	}
	t.Logf("| ablation | dev r@1 | dev r@5 | dev MRR | unseen r@1 | unseen r@5 | unseen MRR |")
	row("none")
	if os.Getenv("MCPX_SEARCH_ABLATE") == "base" {
		return
	}
	for _, a := range []struct {
		name string
		off  func() func()
	}{
		{"question penalty", func() func() { return set(&questionPenalty, 1) }},
		{"request frames", func() func() {
			keep := frames
			frames = nil
			return func() { frames = keep }
		}},
		{"phrasal verbs", func() func() {
			th := builtin()
			keep := th.phrasal
			th.phrasal = nil
			return func() { th.phrasal = keep }
		}},
		{"irregular forms", func() func() {
			keep := irregular
			irregular = nil
			return func() { irregular = keep }
		}},
		{"second hop", func() func() { return set(&weightSecondHop, 0) }},
		{"name coverage", func() func() { return set(&nameCoverage, 0) }},
		{"context weight", func() func() { return set(&weightContext, 1) }},
		{"value words", func() func() { return set(&weightValueWord, 1) }},
		{"value kinds", func() func() { return set(&weightShape, 0) }},
		{"instructions", func() func() { return set(&fieldWeight[FieldInstructions], 0) }},
		{"title", func() func() { return set(&fieldWeight[FieldTitle], 0) }},
		{"param names", func() func() { return set(&fieldWeight[FieldParam], 0) }},
		{"param descriptions", func() func() { return set(&fieldWeight[FieldParamDesc], 0) }},
		{"enum values", func() func() { return set(&fieldWeight[FieldEnum], 0) }},
		{"thesaurus related", func() func() { return set(&weightRelated, 0) }},
		{"thesaurus equivalents", func() func() { return set(&weightEquivalent, 0) }},
	} {
		restore := a.off()
		row(a.name)
		restore()
	}
}
