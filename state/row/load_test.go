package row

import "testing"

func TestLoadWire(t *testing.T) {
	for _, c := range []struct {
		in   float64
		want uint16
	}{{-1, 0}, {0, 0}, {0.0004, 0}, {0.5, 500}, {1, 1000}, {7, 1000}} {
		if got := PerMille(c.in); got != c.want {
			t.Errorf("PerMille(%v) = %d, want %d", c.in, got, c.want)
		}
	}
}
