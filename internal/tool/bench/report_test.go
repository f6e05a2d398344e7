package bench

import (
	"strings"
	"testing"
	"time"
)

func TestSustained(t *testing.T) {
	tests := []struct {
		name                  string
		due, overflow, unsent int64
		want                  bool
		wantNote1, wantNote2  string
	}{
		{"all sent", 1000, 0, 0, true, "", ""},
		{"a few late at the end", 1000, 0, 10, true, "", ""},
		{"sender behind", 1000, 0, 11, false, "11 arrivals were due before the end", "max lag 12.5 ms"},
		{"in-flight cap", 1000, 1, 0, false, "1 arrivals found 7 requests in flight", "1 of 1000 arrivals lost"},
		{"both", 1000, 5, 50, false, "5 arrivals found", "55 of 1000 arrivals lost"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := &Report{RateAsked: 100, RateAchieved: 90, Concurrency: 7, LagMax: 12.5,
				Total: ClassReport{Due: tt.due, Overflow: tt.overflow, Unsent: tt.unsent}}
			ok, note := sustained(rep)
			if ok != tt.want || (note == "") != tt.want {
				t.Fatalf("sustained = %v, %q; want %v", ok, note, tt.want)
			}
			if !tt.want && (!strings.HasPrefix(note, "RATE NOT SUSTAINED: asked 100/s, sent 90/s") || !strings.Contains(note, tt.wantNote1) || !strings.Contains(note, tt.wantNote2)) {
				t.Errorf("note %q, want %q and %q", note, tt.wantNote1, tt.wantNote2)
			}
		})
	}
}

func TestCountUnsentCountsTheRestOfTheWindow(t *testing.T) {
	for _, max := range []int64{0, 5, 1 << 40} {
		cfg := Config{URL: "http://127.0.0.1:1", Classes: testClasses, Rate: 1000, Duration: time.Second, Max: max}
		r, err := newRunner(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// The reference: arrivals of the same stream inside the window and within max.
		ref := NewArrivals(3, cfg.Rate, cfg.Classes)
		var want int64
		for a := ref.Next(); a.At < cfg.Duration && (max == 0 || want < max); a = ref.Next() {
			want++
		}
		arr := NewArrivals(3, cfg.Rate, cfg.Classes)
		got := r.countUnsent(arr, arr.Next(), 0)
		var due, unsent int64
		for _, st := range r.stats {
			due += st.due.Load()
			unsent += st.unsent.Load()
		}
		if got != want || due != want || unsent != want {
			t.Errorf("max %d: countUnsent = %d, due %d, unsent %d; want %d each", max, got, due, unsent, want)
		}
		r.abort()
	}
}

func TestWriteTextWarnsOnLateSender(t *testing.T) {
	for _, tt := range []struct {
		lag  float64
		want bool
	}{{1, false}, {lagWarnMS + 1, true}} {
		rep := &Report{LagP99: tt.lag, Classes: []ClassReport{{Name: "a"}}, Total: ClassReport{Name: "total"}}
		var b strings.Builder
		if err := rep.WriteText(&b); err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(b.String(), "WARNING: sender lag p99"); got != tt.want {
			t.Errorf("lag p99 %v ms: warning shown %v, want %v:\n%s", tt.lag, got, tt.want, b.String())
		}
	}
}
