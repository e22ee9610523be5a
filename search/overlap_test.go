package search

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// overlapWord is a content word for the overlap check: lower-cased
// letters and digits.
var overlapWord = regexp.MustCompile(`[a-z0-9]+`)

// overlapStop are the words the overlap check ignores: function words and
// the verbs every request has.
var overlapStop = strings.Fields(`a an the and or but if then so of to in on at by for with from into onto over
under about as is are was were be been being do does did done have has had i me my we our us you your it its this
that these those there here what which who whom whose when where why how can could would should will shall may
might must please just also all any some each every no not than too very up out off get got give let make want
need like one two using use via per`)

func contentWords(query string) map[string]bool {
	out := map[string]bool{}
	for _, w := range overlapWord.FindAllString(strings.ToLower(query), -1) {
		if !slices.Contains(overlapStop, w) {
			out[w] = true
		}
	}
	return out
}

func jaccard(a, b map[string]bool) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	both := 0
	for w := range a {
		if b[w] {
			both++
		}
	}
	return float64(both) / float64(len(a)+len(b)-both)
}

// overlaps returns mine's intents whose content words overlap an intent
// of others with a shared answer (Jaccard >= 0.5), naming only mine's
// side: a set's author can rephrase without reading the other sets.
func overlaps(mine, others []intent) []string {
	type words struct {
		in intent
		w  map[string]bool
	}
	var theirs []words
	for _, in := range others {
		theirs = append(theirs, words{in, contentWords(in.query)})
	}
	var out []string
	for _, in := range mine {
		w := contentWords(in.query)
		for _, o := range theirs {
			shared := slices.ContainsFunc(in.want, func(name string) bool { return slices.Contains(o.in.want, name) })
			if shared && jaccard(w, o.w) >= 0.5 {
				out = append(out, fmt.Sprintf("%.2f %q", jaccard(w, o.w), in.query))
				break
			}
		}
	}
	return out
}

// TestTrainingSetsRepeatNoMeasuredIntent: the training sets were written
// clear of the never-studied sets (bridgeIntents would drop what repeats
// one; this says so to whoever adds a training set). Only the training
// side is printed.
func TestTrainingSetsRepeatNoMeasuredIntent(t *testing.T) {
	var measured []intent
	for _, set := range neverStudied {
		measured = append(measured, loadIntents(t, set)...)
	}
	for _, set := range trainSets {
		for _, line := range overlaps(loadIntents(t, set), measured) {
			t.Errorf("%s: %s repeats a never-studied intent's words for the same tool (Jaccard >= 0.5): rephrase or drop it", set, line)
		}
	}
}

func TestOverlaps(t *testing.T) {
	mine := []intent{
		{"delete the stale branch feature/x", []string{"github.delete_branch"}},
		{"delete the stale branch feature/x", []string{"gitlab.delete_branch"}},
		{"list my open pull requests", []string{"github.list_pull_requests"}},
	}
	others := []intent{{"please delete stale branch feature/x now", []string{"github.delete_branch", "github.other"}}}
	got := overlaps(mine, others)
	if len(got) != 1 || !strings.Contains(got[0], "delete the stale") {
		t.Errorf("got %q, want only the first intent (same words, shared answer)", got)
	}
}
