package search

import (
	"slices"
	"strings"
	"testing"
)

func TestIsVerb(t *testing.T) {
	for w, want := range map[string]bool{
		"approve": true, "draft": true, "comment": true, "remember": true, "abandon": true, "zoom": true,
		"child": false, "tasks": false, "gitlab": false, "": false, "the": false, "zzz": false, "aaa": false,
	} {
		if got := isVerb(w); got != want {
			t.Errorf("isVerb(%q) = %v, want %v", w, got, want)
		}
	}
}

// The file is what isVerb's binary search needs: comment lines first, then
// one lower-case word a line, sorted, no repeats; and every word is found.
func TestVerbsFile(t *testing.T) {
	var words []string
	body := false
	for _, line := range strings.Split(strings.TrimSuffix(verbsText, "\n"), "\n") {
		if strings.HasPrefix(line, "#") {
			if body {
				t.Fatalf("a comment line among the words: %q", line)
			}
			continue
		}
		body = true
		if line == "" || strings.Trim(line, "abcdefghijklmnopqrstuvwxyz-") != "" {
			t.Fatalf("not one lower-case word: %q", line)
		}
		words = append(words, line)
	}
	if len(words) < 5000 || !slices.IsSorted(words) || len(slices.Compact(slices.Clone(words))) != len(words) {
		t.Fatalf("%d words, sorted %v", len(words), slices.IsSorted(words))
	}
	for _, w := range words {
		if !isVerb(w) {
			t.Fatalf("isVerb(%q) = false for a word of the file", w)
		}
	}
}
