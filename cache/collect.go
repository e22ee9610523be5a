package cache

import (
	"sort"
	"time"
)

// collect is the pure mark-and-sweep decision: given the index, the policy,
// the time and the grace period, it returns the indexes of the entries to
// remove. It never returns a protected entry: one with a live lease, or used
// less than grace ago (or in the future). Its guarantee, which the property
// tests hold:
//
//   - no protected entry is removed;
//   - afterwards no unprotected entry is older (by last use) than MaxAge;
//   - afterwards the total is at most MaxBytes, unless every remaining entry
//     is protected or referenced;
//   - byte eviction goes least recently used first and stops as soon as the
//     total fits.
//
// Cost: one sort, O(n log n).
func collect(entries []Entry, p Policy, now time.Time, grace time.Duration) []int {
	var total int64
	for _, e := range entries {
		total += e.Size
	}
	protected := func(e *Entry) bool {
		return e.Leases > 0 || now.Sub(e.LastUse) < grace
	}
	removed := make([]bool, len(entries))
	var out []int
	if p.MaxAge >= 0 {
		for i := range entries {
			e := &entries[i]
			if !protected(e) && now.Sub(e.LastUse) > p.MaxAge {
				removed[i] = true
				out = append(out, i)
				total -= e.Size
			}
		}
	}
	if p.MaxBytes >= 0 && total > p.MaxBytes {
		order := make([]int, 0, len(entries))
		for i := range entries {
			e := &entries[i]
			if !removed[i] && !protected(e) && len(e.Refs) == 0 {
				order = append(order, i)
			}
		}
		sort.Slice(order, func(a, b int) bool {
			ea, eb := &entries[order[a]], &entries[order[b]]
			if !ea.LastUse.Equal(eb.LastUse) {
				return ea.LastUse.Before(eb.LastUse)
			}
			return ea.Digest < eb.Digest
		})
		for _, i := range order {
			if total <= p.MaxBytes {
				break
			}
			out = append(out, i)
			total -= entries[i].Size
		}
	}
	return out
}
