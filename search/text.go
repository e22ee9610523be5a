package search

import (
	"strings"
	"sync"
	"unicode"

	"github.com/mcpx-dev/mcpx/internal/lazy"
)

// words splits text into words at anything that is not a letter or digit,
// at camelCase humps and between letters and digits ("readTextFile" →
// read, Text, File; "HTTPServer v2" → HTTP, Server, v, 2).
func words(text string) []string {
	var out []string
	rs := []rune(text)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, string(rs[start:end]))
		}
		start = -1
	}
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		switch {
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush(i)
			start = i
		case unicode.IsUpper(prev) && unicode.IsUpper(r) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && !pluralS(rs, i+1):
			flush(i)
			start = i
		case unicode.IsDigit(r) != unicode.IsDigit(prev):
			flush(i)
			start = i
		}
	}
	flush(len(rs))
	return out
}

// pluralS reports whether rs[i] is the s of an acronym's plural that
// ends the word (PRs, URLs, IDs): not a new word's first letter (HTTPServer).
func pluralS(rs []rune, i int) bool {
	return rs[i] == 's' && (i+1 == len(rs) || !unicode.IsLetter(rs[i+1]) && !unicode.IsDigit(rs[i+1]))
}

// token is one search term of a text.
type token struct {
	term    string // lower-cased, stemmed
	written string // the word as written, lower-cased
	// whole marks the whole of a word written in parts ("GitLab", "k8s",
	// "readTextFile"), kept beside its parts (git, lab; readtextfil…) so
	// that "gitlab" and "k8s" find it. It does not count in a field's
	// length or in phrases.
	whole bool
}

// tokenize appends the tokens of text to out: each word (a run of letters
// and digits) split at camelCase humps and between letters and digits,
// lower-cased, stop words and single letters dropped, stemmed (Porter);
// a word so split also as a whole, and the digits of a word that also has
// letters only as part of that whole.
func tokenize(text string, out []token) []token {
	rs := []rune(text)
	for i := 0; i < len(rs); {
		if !isWordRune(rs[i]) {
			i++
			continue
		}
		j := i
		letters, digits := false, false
		for j < len(rs) && isWordRune(rs[j]) {
			if unicode.IsDigit(rs[j]) {
				digits = true
			} else {
				letters = true
			}
			j++
		}
		run := string(rs[i:j])
		i = j
		parts := words(run)
		if len(parts) == 1 {
			if t, ok := term(run); ok {
				out = append(out, token{term: t, written: strings.ToLower(run)})
			}
			continue
		}
		for _, p := range parts {
			if letters && digits && unicode.IsDigit([]rune(p)[0]) {
				continue // the 8 of k8s, the 2 of v2
			}
			if t, ok := term(p); ok {
				out = append(out, token{term: t, written: strings.ToLower(p)})
			}
		}
		if t, ok := term(run); ok {
			out = append(out, token{term: t, written: strings.ToLower(run), whole: true})
		}
	}
	return out
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// terms is the terms of text as a document indexes them (tokenize).
func terms(text string) []string {
	var out []string
	for _, t := range tokenize(text, nil) {
		out = append(out, t.term)
	}
	return out
}

// term is the search term of one word, if it is one.
func term(w string) (string, bool) {
	w = strings.ToLower(w)
	if len(w) == 1 && (w[0] < '0' || w[0] > '9') {
		return "", false // "a", "s" of "it's", "v" of "v2"
	}
	if stopWords()[w] {
		return "", false
	}
	switch w {
	case "news", "accessibility":
		// Porter makes them "new" and "access", other words.
		return w, true
	}
	if base, ok := irregular.Get()[w]; ok {
		w = base
	}
	return stem(w), true
}

// irregular are English verbs' irregular past forms and nouns' irregular
// plurals, which suffix stripping cannot reduce: "the requests the page
// sent" asks for what "send" does, "overwritten" is "overwrite".
// Forms that are as often another word ("left", "lay", "rose") are not
// here. Built on first use: the CLI links this package for its
// did-you-mean suggestions, and as a package-level map it was built at the
// start of every mcpx process (18,000 instructions, 2 % of `mcpx version`).
var irregular = &lazy.Value[map[string]string]{New: func() map[string]string {
	return map[string]string{
		"sent": "send", "ran": "run", "made": "make", "wrote": "write", "written": "write",
		"overwrote": "overwrite", "overwritten": "overwrite", "rewrote": "rewrite", "rewritten": "rewrite",
		"took": "take", "taken": "take", "shown": "show", "got": "get", "gotten": "get",
		"built": "build", "rebuilt": "rebuild", "chose": "choose", "chosen": "choose", "began": "begin", "begun": "begin",
		"broke": "break", "broken": "break", "brought": "bring", "bought": "buy", "caught": "catch",
		"drew": "draw", "drawn": "draw", "drove": "drive", "driven": "drive", "fell": "fall", "fallen": "fall",
		"forgot": "forget", "forgotten": "forget", "froze": "freeze", "frozen": "freeze", "gave": "give", "given": "give",
		"went": "go", "gone": "go", "hid": "hide", "hidden": "hide", "held": "hold", "kept": "keep",
		"knew": "know", "known": "know", "lost": "lose", "meant": "mean", "met": "meet", "paid": "pay",
		"said": "say", "saw": "see", "seen": "see", "sold": "sell", "spoke": "speak", "spoken": "speak",
		"spent": "spend", "stood": "stand", "taught": "teach", "threw": "throw", "thrown": "throw",
		"told": "tell", "understood": "understand", "undid": "undo", "undone": "undo", "woke": "wake",
		"wore": "wear", "worn": "wear", "won": "win", "sang": "sing", "sung": "sing", "slept": "sleep",
		"found": "find", "felt": "feel", "heard": "hear", "sought": "seek", "fought": "fight",
		"children": "child", "men": "man", "women": "woman", "mice": "mouse", "indices": "index",
		"vertices": "vertex", "matrices": "matrix", "analyses": "analysis", "criteria": "criterion",
	}
}}

// stopWords are words too common in requests and tool descriptions to say
// anything about a tool: English function words and the filler of a
// request ("please", "I want to", "can you"). Verbs and nouns that name an
// action or an object (get, list, all, new, file) are never stop words.
func stopWords() map[string]bool {
	stopOnce.Do(func() { stopSet = makeStopWords() })
	return stopSet
}

var (
	stopOnce sync.Once
	stopSet  map[string]bool
)

func makeStopWords() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against am an and any are as at be because been
		before being below between both but by can could did do does doing down during each few for from further
		had has have having he her here hers him his how i if in into is it its itself just me more most my
		no nor not of off on once only or other our ours out over own same she should so some such than that
		the their theirs them then there these they this those through to too under until up very was we were
		what when where which while who whom why will with would you your yours use used using uses via e g eg
		etc please want wants need needs let lets like ok okay im ive youre whats thats us also currently`) {
		m[w] = true
	}
	return m
}

// isPlural reports whether w (a word as written, lower case) is a noun's
// plural: it ends in s, and without it (or its es, or ies for y) it has
// the same stem ("requests", "entities", "pods"; not "status", "access",
// "analysis", "news").
func isPlural(w string) bool {
	if len(w) < 3 || w[len(w)-1] != 's' || w == "news" {
		return false
	}
	switch {
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"):
		return false
	}
	st := stem(w)
	return stem(w[:len(w)-1]) == st || strings.HasSuffix(w, "ies") && stem(w[:len(w)-3]+"y") == st
}
