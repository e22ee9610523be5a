package search

import "strings"

// Suggest returns the candidate a mistyped or misremembered name most
// likely meant, or "" when none is close: every "did you mean" of mcpx
// (commands, flags, config keys, namespaces, tools, parameters, prompts).
//
// First by spelling: the candidate nearest by edit distance (Levenshtein,
// case-insensitive), if within max(2, len(s)/3); ties go to the earlier
// candidate. Else by meaning: the candidate whose words are the words of s
// or what the thesaurus says they stand for, every word of each matched —
// create_ticket finds create_issue, delete_dir delete_directory,
// list-prs list_pull_requests.
func Suggest(s string, candidates []string) string {
	if near := nearest(s, candidates); near != "" {
		return near
	}
	return sameWords(s, candidates)
}

// nearest is the candidate closest to s by edit distance, within
// max(2, len(s)/3), or "".
func nearest(s string, candidates []string) string {
	ls := []rune(strings.ToLower(s))
	limit := max(2, len(ls)/3)
	best, bestD := "", limit+1
	for _, c := range candidates {
		if d := levenshtein(ls, []rune(strings.ToLower(c))); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// sameWords is the candidate whose words and s's match one for one
// (directly or through the thesaurus), the one matched by the heaviest
// weights when several are; "" when none.
func sameWords(s string, candidates []string) string {
	// Without the bridge: its words say what a request tends to want,
	// not what a name stands for.
	q := parseQuery(s, false)
	if q.Empty() {
		return ""
	}
	th := builtin()
	best, bestW := "", 0.0
	for _, c := range candidates {
		if w, ok := matchOneForOne(th, q, c); ok && w > bestW {
			best, bestW = c, w
		}
	}
	return best
}

// matchOneForOne reports whether q's words and candidate c's match one for
// one, and by which weight.
func matchOneForOne(th *thesaurus, q Query, c string) (float64, bool) {
	// The candidate's terms as a document has them: its words, their
	// phrases, and wholes of words written in parts; ts are its words.
	var have, ts []string
	for _, t := range tokenize(c, nil) {
		have = append(have, t.term)
		if !t.whole {
			ts = append(ts, t.term)
		}
	}
	for i := range ts {
		if n := th.phraseAt(ts, i); n > 0 {
			have = append(have, strings.Join(ts[i:i+n], " "))
		}
	}
	used := map[string]bool{}
	var w float64
	for _, con := range q.concepts {
		if con.whole || con.shape {
			continue
		}
		got := 0.0
		var term string
		for _, a := range con.alts {
			if a.weight > got && contains(have, a.term) {
				got, term = a.weight, a.term
			}
		}
		if got == 0 {
			return 0, false
		}
		w += got
		for _, part := range strings.Fields(term) {
			used[part] = true
		}
		used[term] = true
	}
	for _, t := range ts {
		if !used[t] {
			return 0, false // a word of the candidate s does not have
		}
	}
	return w, true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func levenshtein(a, b []rune) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
