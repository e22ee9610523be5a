package search

import (
	"os"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/lazy"
)

// TestAblate measures the ranker with one rule off at a time, on the
// sets whose misses are studied (development, unseen, blind5, fresh and,
// since the eighth round, blind6) and, their recall@5 and MRR only, the
// others (held-out, blind4): a rule stays if the studied sets do not lose
// by it and the others do not fall (MCPX_SEARCH_ABLATE=1; =base prints the
// ranker as it is, alone).
func TestAblate(t *testing.T) {
	if os.Getenv("MCPX_SEARCH_ABLATE") == "" {
		t.Skip("MCPX_SEARCH_ABLATE=1 runs it")
	}
	c := loadCorpus(t)
	dev, unseen, blind5, fresh, blind6 := loadIntents(t, "dev"), loadIntents(t, "unseen"), loadIntents(t, "blind5"), loadIntents(t, "fresh"), loadIntents(t, "blind6")
	heldout, blind4 := loadIntents(t, "heldout"), loadIntents(t, "blind4")
	row := func(name string) {
		r := mcpxRanker(c)
		d, u, b5, f, b6 := evaluate(r, dev), evaluate(r, unseen), evaluate(r, blind5), evaluate(r, fresh), evaluate(r, blind6)
		h, b4 := evaluate(r, heldout), evaluate(r, blind4)
		t.Logf("| %-28s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f |", name,
			d.r1, d.r5, d.mrr, u.r1, u.r5, u.mrr, b5.r1, b5.r5, b5.mrr, f.r1, f.r5, f.mrr, b6.r1, b6.r5, b6.mrr, h.r5, h.mrr, b4.r5, b4.mrr)
	}
	set := func(p *float64, v float64) func() {
		keep := *p
		*p = v
		return func() { *p = keep }
	}
	t.Logf("| ablation | dev r@1 | dev r@5 | dev MRR | unseen r@1 | unseen r@5 | unseen MRR | blind5 r@1 | blind5 r@5 | blind5 MRR | fresh r@1 | fresh r@5 | fresh MRR | blind6 r@1 | blind6 r@5 | blind6 MRR | held-out r@5 | held-out MRR | blind4 r@5 | blind4 MRR |")
	row("none")
	if os.Getenv("MCPX_SEARCH_ABLATE") == "base" {
		return
	}
	for _, a := range []struct {
		name string
		off  func() func()
	}{
		{"question penalty", func() func() { return set(&questionPenalty, 1) }},
		{"look penalty", func() func() { return set(&lookPenalty, 1) }},
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
		{"separable phrasal verbs", func() func() {
			th := builtin()
			keep := th.separable
			th.separable = nil
			return func() { th.separable = keep }
		}},
		{"irregular forms", func() func() {
			keep := irregular
			irregular = &lazy.Value[map[string]string]{New: func() map[string]string { return nil }}
			return func() { irregular = keep }
		}},
		{"second hop", func() func() { return set(&weightSecondHop, 0) }},
		{"name coverage", func() func() { return set(&nameCoverage, 0) }},
		{"state words", func() func() { return set(&stateCover, 1) }},
		{"number", func() func() { return set(&numberCover, 1) }},
		{"context weight", func() func() { return set(&weightContext, 1) }},
		{"topic weight", func() func() { return set(&weightTopic, weightContext) }},
		{"value words", func() func() { return set(&weightValueWord, 1) }},
		{"value kinds", func() func() { return set(&weightShape, 0) }},
		{"quoted text", func() func() { return set(&weightQuoted, 1) }},
		{"conversion", func() func() { return set(&conversionPenalty, 1) }},
		{"instructions", func() func() { return set(&fieldWeight[FieldInstructions], 0) }},
		{"server name", func() func() { return set(&fieldWeight[FieldServer], 0) }},
		{"named server", func() func() { return set(&otherServerPenalty, 1) }},
		{"title", func() func() { return set(&fieldWeight[FieldTitle], 0) }},
		{"param names", func() func() { return set(&fieldWeight[FieldParam], 0) }},
		{"param descriptions", func() func() { return set(&fieldWeight[FieldParamDesc], 0) }},
		{"enum values", func() func() { return set(&fieldWeight[FieldEnum], 0) }},
		{"learned bridge", func() func() { return set(&weightBridge, 0) }},
		{"thesaurus related", func() func() { return set(&weightRelated, 0) }},
		{"thesaurus equivalents", func() func() { return set(&weightEquivalent, 0) }},
	} {
		restore := a.off()
		row(a.name)
		restore()
	}
}
