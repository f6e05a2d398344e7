package backoff

import (
	"testing"
	"time"
)

func TestNext(t *testing.T) {
	tests := []struct {
		name     string
		b        Backoff
		want     []time.Duration
		resetAt  int // Reset before this call; -1 never
		afterRst time.Duration
	}{
		{"doubles to the cap", Backoff{Min: time.Second, Max: 5 * time.Second},
			[]time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second}, -1, 0},
		{"reset starts from min", Backoff{Min: 100 * time.Millisecond, Max: time.Second},
			[]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond}, 2, 0},
		{"max below min stays at min", Backoff{Min: time.Second, Max: time.Millisecond},
			[]time.Duration{time.Second, time.Second}, -1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.b
			for i, w := range tt.want {
				if i == tt.resetAt {
					b.Reset()
				}
				if got := b.Next(); got != w {
					t.Fatalf("wait %d = %v, want %v", i, got, w)
				}
			}
		})
	}
}

func TestJitterStaysInRange(t *testing.T) {
	b := Backoff{Min: time.Second, Max: 8 * time.Second, Jitter: true}
	for i := range 200 {
		base := b.Peek()
		got := b.Next()
		if got < base/2 || got > base {
			t.Fatalf("wait %d = %v, want within [%v, %v]", i, got, base/2, base)
		}
	}
	if b.Peek() != 8*time.Second {
		t.Fatalf("after many waits the base is %v, want the cap", b.Peek())
	}
}
