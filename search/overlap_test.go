package search

import (
	"fmt"
	"os"
	"path/filepath"
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
var overlapStop = func() map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.Fields(`a an the and or but if then so of to in on at by for with from into onto
over under about as is are was were be been being do does did done have has had i me my we our us you your
it its this that these those there here what which who whom whose when where why how can could would should
will shall may might must please just also all any some each every no not than too very up out off get got
give let make want need like one two using use via per`) {
		set[w] = true
	}
	return set
}()

func contentWords(query string) map[string]bool {
	out := map[string]bool{}
	for _, w := range overlapWord.FindAllString(strings.ToLower(query), -1) {
		if !overlapStop[w] {
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

// overlap is one of mine's intents that overlaps another set's.
type overlap struct {
	index   int     // in mine
	jaccard float64 // the highest with another set's intent of a shared answer
}

// overlapping returns mine's intents whose content words overlap an
// intent of others with a shared answer (Jaccard >= 0.5). Callers name
// only mine's side: a set's author can rephrase without reading the
// other sets.
func overlapping(mine, others []intent) []overlap {
	theirs := make([]map[string]bool, len(others))
	for i, in := range others {
		theirs[i] = contentWords(in.query)
	}
	var out []overlap
	for i, in := range mine {
		w := contentWords(in.query)
		best := 0.0
		for j, o := range others {
			if slices.ContainsFunc(in.want, func(name string) bool { return slices.Contains(o.want, name) }) {
				best = max(best, jaccard(w, theirs[j]))
			}
		}
		if best >= 0.5 {
			out = append(out, overlap{i, best})
		}
	}
	return out
}

// describe names an overlapping intent of mine for a message.
func (o overlap) describe(mine []intent) string {
	return fmt.Sprintf("%.2f %q", o.jaccard, mine[o.index].query)
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
		mine := loadIntents(t, set)
		for _, o := range overlapping(mine, measured) {
			t.Errorf("%s: %s repeats a never-studied intent's words for the same tool (Jaccard >= 0.5): rephrase or drop it", set, o.describe(mine))
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
	got := overlapping(mine, others)
	if len(got) != 1 || got[0].index != 0 || got[0].jaccard < 0.8 {
		t.Errorf("got %+v, want only the first intent (same words but one, shared answer)", got)
	}
}

// TestNewSetOverlap is the check an intent set's author runs before
// committing it: MCPX_SEARCH_OVERLAP=FILE (absolute, or relative to
// search/, where go test runs it) prints FILE's intents that
// overlap an intent of another set in testdata/intents (only FILE's side,
// so the author never reads the other sets), and fails while any does or
// while an answer names no recorded tool.
func TestNewSetOverlap(t *testing.T) {
	path := os.Getenv("MCPX_SEARCH_OVERLAP")
	if path == "" {
		t.Skip("MCPX_SEARCH_OVERLAP=FILE runs it")
	}
	mine, err := readIntents(path)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("testdata", "intents", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var others []intent
	for _, f := range files {
		if same, err := sameFile(f, path); err != nil {
			t.Fatal(err)
		} else if !same {
			in, err := readIntents(f)
			if err != nil {
				t.Fatal(err)
			}
			others = append(others, in...)
		}
	}
	for _, bad := range loadCorpus(t).unknownAnswers(mine) {
		t.Errorf("%s: %s", path, bad)
	}
	found := overlapping(mine, others)
	for _, o := range found {
		t.Errorf("%s: %s overlaps an older intent for the same tool: rephrase it", path, o.describe(mine))
	}
	t.Logf("%d of %d intents overlap", len(found), len(mine))
}

func sameFile(a, b string) (bool, error) {
	sa, err := os.Stat(a)
	if err != nil {
		return false, err
	}
	sb, err := os.Stat(b)
	if err != nil {
		return false, err
	}
	return os.SameFile(sa, sb), nil
}
