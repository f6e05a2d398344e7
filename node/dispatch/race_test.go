//go:build race

package dispatch

// raceEnabled: sync.Pool drops items at random under the race detector, so
// allocation counts are only checked without it.
const raceEnabled = true
