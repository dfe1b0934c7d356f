// Package suggest finds the known name nearest to a misspelt one, for
// "did you mean" hints in error messages.
package suggest

import "strings"

// Nearest returns the candidate closest to name by edit distance (case
// insensitive), if it is close enough to be a plausible typo; otherwise "".
func Nearest(name string, candidates []string) string {
	best, bestDist := "", -1
	ln := strings.ToLower(name)
	for _, c := range candidates {
		d := distance(ln, strings.ToLower(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 {
		return ""
	}
	limit := len(name)/3 + 1
	if limit > 3 {
		limit = 3
	}
	if bestDist > limit {
		return ""
	}
	return best
}

// Hint returns ` (did you mean "x"?)` for the nearest candidate, or "".
func Hint(name string, candidates []string) string {
	if n := Nearest(name, candidates); n != "" {
		return ` (did you mean "` + n + `"?)`
	}
	return ""
}

// distance is the optimal-string-alignment edit distance (Levenshtein with
// transpositions of adjacent characters).
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
