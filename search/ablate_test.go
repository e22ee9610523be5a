package search

import (
	"fmt"
	"os"
	"testing"

	"github.com/mcpx-dev/mcpx/internal/lazy"
)

// TestAblate measures the ranker with one rule off at a time, on the
// sets whose misses are studied (studiedSets: recall@1, recall@5, MRR@10)
// and, their recall@5 and MRR only, the others (held-out, blind4): a rule
// stays if the studied sets do not lose by it and the others do not fall
// (MCPX_SEARCH_ABLATE=1; =base prints the ranker as it is, alone).
func TestAblate(t *testing.T) {
	if os.Getenv("MCPX_SEARCH_ABLATE") == "" {
		t.Skip("MCPX_SEARCH_ABLATE=1 runs it")
	}
	c := loadCorpus(t)
	sets := map[string][]intent{}
	header := "| ablation |"
	for _, set := range studiedSets {
		sets[set] = loadIntents(t, set)
		header += fmt.Sprintf(" %s r@1 | %[1]s r@5 | %[1]s MRR |", set)
	}
	for _, set := range neverStudied {
		sets[set] = loadIntents(t, set)
		header += fmt.Sprintf(" %s r@5 | %[1]s MRR |", set)
	}
	row := func(name string) {
		r := mcpxRanker(c)
		line := fmt.Sprintf("| %-28s |", name)
		for _, set := range studiedSets {
			s := evaluate(r, sets[set])
			line += fmt.Sprintf(" %.3f | %.3f | %.3f |", s.r1, s.r5, s.mrr)
		}
		for _, set := range neverStudied {
			s := evaluate(r, sets[set])
			line += fmt.Sprintf(" %.3f | %.3f |", s.r5, s.mrr)
		}
		t.Log(line)
	}
	set := func(p *float64, v float64) func() {
		keep := *p
		*p = v
		return func() { *p = keep }
	}
	t.Log(header)
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
