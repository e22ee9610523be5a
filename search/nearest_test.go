package search

import (
	"testing"
)

func TestSuggest(t *testing.T) {
	cands := []string{"sharing", "scope", "max", "idleTimeout", "callTimeout"}
	for _, tt := range []struct{ in, want string }{
		{"sharng", "sharing"},
		{"SCOPE", "scope"},
		{"idletimeout", "idleTimeout"},
		{"mx", "max"},
		{"callTimout", "callTimeout"},
		{"zzzzzzzz", ""},
		{"description", ""},
	} {
		if got := Suggest(tt.in, cands); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if Suggest("x", nil) != "" {
		t.Error("no candidates must give empty")
	}
	// By meaning, when spelling finds nothing: the same words, or what
	// the thesaurus says they stand for, one for one.
	tools := []string{"create_issue", "list_issues", "delete_directory", "list_pull_requests", "create_pull_request", "read_file"}
	for _, tt := range []struct{ in, want string }{
		{"create_ticket", "create_issue"},
		{"make-issue", "create_issue"},
		{"delete_dir", "delete_directory"},
		{"rm_folder", "delete_directory"},
		{"list_prs", "list_pull_requests"},
		{"openPR", "create_pull_request"},
		{"fetchFile", "read_file"},
		{"ticket", ""},                // a word of the tool's name is missing
		{"create_labelled_issue", ""}, // a word the tool's name does not have
		{"delete_everything", ""},     // nothing like it
	} {
		if got := Suggest(tt.in, tools); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestSuggestNotByBridge: a bridge word says what requests with a word
// tend to want, not what the word names, so no suggestion rests on it.
func TestSuggestNotByBridge(t *testing.T) {
	defer setBridge(bridgeTable{"descript": {{"share", "shared", 1}}})()
	if got := Suggest("description", []string{"sharing", "scope"}); got != "" {
		t.Errorf(`Suggest("description") = %q, want "" (only the bridge leads to sharing)`, got)
	}
}

// TestSuggestReadsNoBridge: the CLI's "did you mean" never reads the
// bridge: a name's words stand for themselves.
func TestSuggestReadsNoBridge(t *testing.T) {
	var read countingBridge
	defer setBridge(&read)()
	Suggest("lst", []string{"list", "ls", "serve"})
	Suggest("open issue", []string{"create_issue", "get_issue"})
	if read > 0 {
		t.Errorf("Suggest read the bridge %d times", read)
	}
}

// countingBridge is a bridge with no words that counts how often it is
// read.
type countingBridge int

func (c *countingBridge) words(string) []bridgeWord { *c++; return nil }
