package sim

import "slices"

// Shrink makes a failing run minimal: it drops the schedule's episodes
// one at a time, keeping each drop after which the same invariant still
// breaks, and returns the last failing run (its Kept is what remains).
func Shrink(cfg Config, failed Result) Result {
	if failed.Violation == nil {
		return failed
	}
	best := failed
	for i := 0; i < len(best.Kept); {
		keep := slices.Delete(slices.Clone(best.Kept), i, i+1)
		c := cfg
		c.Keep = keep
		if keep == nil {
			c.Keep = []int{}
		}
		r := Run(c)
		if r.Violation != nil && r.Violation.Invariant == failed.Violation.Invariant {
			best = r
			continue
		}
		i++
	}
	return best
}
