package config

import "strings"

// Nearest returns the candidate closest to s by edit distance (Levenshtein,
// case-insensitive), or "" when nothing is reasonably close: the distance
// must be at most max(2, len(s)/3). Ties go to the earlier candidate. Used for
// unknown keys, namespaces and tools.
func Nearest(s string, candidates []string) string {
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
