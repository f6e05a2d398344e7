package config

import "strings"

// closest returns the candidate a misspelled word most likely meant, or ""
// when none is near: at most one edit for short words, two for words of
// six letters or more, ignoring case.
func closest(word string, candidates []string) string {
	limit := 1
	if len(word) >= 6 {
		limit = 2
	}
	best, bestD := "", limit+1
	for _, c := range candidates {
		if abs(len(word)-len(c)) > limit {
			continue // the distance is at least the difference in length: a long unknown key costs no table
		}
		if d := editDistance(strings.ToLower(word), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b, in bytes
// (keys are ASCII).
func editDistance(a, b string) int {
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

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
