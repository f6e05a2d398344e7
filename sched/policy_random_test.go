package sched

import "testing"

func TestRandomCoversPool(t *testing.T) {
	p := &Random{Rand: seeded()}
	counts := map[string]int{}
	for i := 0; i < 3000; i++ {
		counts[p.Select(testPool(), nil).Name]++
	}
	for _, n := range []string{"a", "b", "c"} {
		if counts[n] < 850 || counts[n] > 1150 {
			t.Errorf("random: %s chosen %d of 3000", n, counts[n])
		}
	}
}
