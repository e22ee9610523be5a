package search

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// The embedded thesaurus parses: every line a group of two or more
// entries, each reduced to terms.
func TestThesaurusFile(t *testing.T) {
	if _, err := parseThesaurus(thesaurusText); err != nil {
		t.Fatal(err)
	}
}

// No entry of the embedded thesaurus is written twice: a copy changes
// nothing in ranking, so nothing else would notice one, and an edit of one
// copy would leave the other behind.
func TestThesaurusHasNoRepeatedLine(t *testing.T) {
	seen := map[string]int{}
	for i, line := range strings.Split(thesaurusText, "\n") {
		entry := strings.TrimSpace(line)
		if c := strings.IndexByte(entry, '#'); c >= 0 {
			entry = strings.TrimSpace(entry[:c])
		}
		if entry == "" {
			continue
		}
		if first, ok := seen[entry]; ok {
			t.Errorf("thesaurus.txt:%d repeats line %d: %s", i+1, first, entry)
			continue
		}
		seen[entry] = i + 1
	}
}

// matches is what a query word matches through the thesaurus.
func matches(word string) []string {
	var out []string
	for _, c := range ParseQuery(word).concepts {
		for _, a := range c.alts[1:] {
			out = append(out, builtin().written[a.term])
		}
	}
	return out
}

// The vocabulary the issue names: abbreviations both ways, phrases, and
// verb classes.
func TestThesaurusVocabulary(t *testing.T) {
	for _, c := range []struct{ word, want string }{
		{"ticket", "issue"}, {"issue", "ticket"},
		{"dir", "directory"}, {"directories", "dir"}, {"folder", "directory"},
		{"MR", "merge request"}, {"merge request", "mr"},
		{"PR", "pull request"}, {"PRs", "pull request"}, {"pull requests", "pr"},
		{"k8s", "kubernetes"}, {"kubernetes", "k8s"},
		{"repo", "repository"}, {"repositories", "repo"},
		{"db", "database"},
		{"make", "create"}, {"new", "create"}, {"add", "create"}, {"start", "create"}, {"open", "create"},
		{"erase", "delete"}, {"forget", "delete"}, {"drop", "delete"}, {"remove", "delete"},
		{"show", "list"}, {"enumerate", "list"},
		{"fetch", "get"}, {"retrieve", "read"}, {"view", "get"},
		{"edit", "update"}, {"modify", "change"},
		{"when", "time"},                                                      // a cue: a common word that points somewhere
		{"set up", "create"}, {"tear down", "delete"}, {"close to", "nearby"}, // phrasal verbs
		{"remember", "knowledge graph"},                                                          // two steps: remember → memory → knowledge graph
		{"gh", "github"}, {"a11y", "accessibility"}, {"fs", "filesystem"}, {"dblclick", "click"}, // jargon and abbreviations
		{"lgtm", "approve"}, {"signed off", "approve"}, {"file a", "create"}, {"at once", "multiple"}, {"hold on", "wait"},
		{"shrink", "compress"}, {"shrink", "scale"}, {"heaviest", "size"}, {"restart", "rollout"}, {"everybody", "all"},
		{"note that", "observation"}, {"remember that", "fact"}, {"ok", "dialog"}, {"space", "size"}, {"events", "describe"}, {"stored", "memory"},
		{"peek", "read"}, {"grep", "code"}, {"blog", "web"},
		{"propose", "pull request"}, {"history", "commit"}, {"titled", "search"}, {"nest", "move"}, {"spinner", "wait"}, {"XHR", "network request"},
		{"let the team know", "send"}, {"take worker-2 out", "cordon"}, {"merge my fix into", "pull request"}, // separable phrasal verbs
		{"person", "entity"}, {"notifications", "subscribe"},
		{"sed", "edit"}, {"printenv", "environment"}, {"ts", "timestamp"}, {"thumbs-up", "reaction"}, {"vector store", "knowledge base"},
		{"stylesheet", "media"}, {"roll my-redis forward", "upgrade"}, {"return to", "back"},
		{"pull feature/x into main", "pull request"}, {"coords", "geocode"}, {"lat/lng", "geocode"},
		{"kubectl label ns dev", "kubectl generic"}, {"kubectl config current-context", "kubectl context"}, // a CLI's subcommands
	} {
		if got := matches(c.word); !slices.Contains(got, c.want) {
			t.Errorf("%q matches %q, not %q", c.word, got, c.want)
		}
	}
	// One way: "open" may mean create, but "create" never means open;
	// "drop" may mean delete, "delete" never drag-and-drop.
	for _, c := range []struct{ word, not string }{{"create", "open"}, {"delete", "drop"}, {"make", "start"}, {"set up", "update"}, {"close to", "close"}} {
		if got := matches(c.word); slices.Contains(got, c.not) {
			t.Errorf("%q matches %q", c.word, c.not)
		}
	}
}

func TestThesaurusFormat(t *testing.T) {
	th, err := parseThesaurus("# comment\nrepository = repo\ncreate, make, new # trailing\n\nopen > create, read\npull request = pr\n")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]related{
		"repositori": {{"repo", true}}, "repo": {{"repositori", true}},
		"creat": {{"make", false}, {"new", false}}, "open": {{"creat", false}, {"read", false}},
		"pull request": {{"pr", true}}, "pr": {{"pull request", true}},
	}
	for k, v := range want {
		if got := th.alts[k]; !slices.Equal(got, v) {
			t.Errorf("alts[%q] = %v, want %v", k, got, v)
		}
	}
	if _, ok := th.alts["read"]; ok {
		t.Errorf("one way went both ways: %v", th.alts["read"])
	}
	if n := th.phraseAt([]string{"open", "pull", "request"}, 1); n != 2 {
		t.Errorf("phrase at 1: %d", n)
	}
	// A phrasal verb keeps its common word; the verb alone is not it.
	th, err = parseThesaurus("set up > create, install\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := th.alts["set up"]; !slices.Equal(got, []related{{"creat", false}, {"instal", false}}) {
		t.Errorf(`alts["set up"] = %v`, got)
	}
	if _, ok := th.alts["set"]; ok {
		t.Error(`"set" alone got the phrasal verb's entries`)
	}
	if n, key := th.phrasalAt(strings.Fields("please Set up the db"), 1); n != 2 || key != "set up" {
		t.Errorf("phrasalAt: %d %q", n, key)
	}
	if n, _ := th.phrasalAt(strings.Fields("set the db up"), 0); n != 0 {
		t.Errorf("phrasalAt matched words apart: %d", n)
	}
	// A separable one may have its object between verb and particle, in
	// the same clause; the query is read with the particle moved next to
	// its verb.
	th, err = parseThesaurus("let … know > notify, send\n")
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]string{
		"let the #ops channel know it's out": "let know the #ops channel it's out",
		"let the team know.":                 "let know the team.",
		"let them know":                      "let know them",
		"let know the team":                  "let know the team",
		"let the whole on-call team know":    "let the whole on-call team know", // too far apart
		"let it be, then know":               "let it be, then know",            // another clause
	} {
		if got := strings.Join(th.joinSeparated(strings.Fields(text)), " "); got != want {
			t.Errorf("joinSeparated(%q) = %q, want %q", text, got, want)
		}
	}
	if got := th.alts["let know"]; !slices.Equal(got, []related{{"notifi", false}, {"send", false}}) {
		t.Errorf(`alts["let know"] = %v`, got)
	}
	// A verb that begins a phrase the thesaurus knows is that phrase, not
	// a separable verb.
	th, err = parseThesaurus("pull … into > merge\npull request = pr\n")
	if err != nil {
		t.Fatal(err)
	}
	for text, want := range map[string]string{
		"pull feature/x into main":        "pull into feature/x main",
		"open a pull request into main":   "open a pull request into main",
		"pull request from fix into main": "pull request from fix into main",
	} {
		if got := strings.Join(th.joinSeparated(strings.Fields(text)), " "); got != want {
			t.Errorf("joinSeparated(%q) = %q, want %q", text, got, want)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"a = b, c", "line 1: a line is equivalents"},
		{"let … the team > tell", "line 1: \"let … the team\": a separable phrasal verb is a word"},
		{"x\nalone", "line 1: a group needs at least two entries"},
		{"ab, , cd", "line 1: an empty entry"},
		{"ab, the", `line 1: "the" is only common words`},
		{"files, file", `line 1: "file" says the same as another entry`},
		{"a > b > c", "line 1: one way is a single word"},
		{"a > b = c", "line 1: a line is equivalents"},
	} {
		_, err := parseThesaurus(c.text)
		if !errors.Is(err, ErrThesaurus) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("parse %q: %v, want %q", c.text, err, c.want)
		}
	}
}
