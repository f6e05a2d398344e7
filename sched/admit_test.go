package sched

import (
	"testing"
	"time"
)

func TestAdmissionWait(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name   string
		svc    []time.Duration
		lambda []float64
		depth  []int
		class  int
		one    bool
		slots  int
		want   time.Duration
		ok     bool
	}{
		{"no boards", []time.Duration{20 * ms, 20 * ms}, []float64{0, 0}, []int{0, 5}, 1, false, 0, 0, false},
		{"nothing ahead", []time.Duration{20 * ms, 20 * ms}, []float64{0, 0}, []int{0, 0}, 1, false, 6, 0, true},
		{"no service time yet", []time.Duration{20 * ms, 0}, []float64{0, 0}, []int{0, 3}, 1, false, 6, 0, false},
		// 6 queued pages of 20 ms on 6 free slots: 20 ms.
		{"own class only", []time.Duration{20 * ms, 20 * ms}, []float64{0, 0}, []int{0, 6}, 1, false, 6, 20 * ms, true},
		// control arrives at 100/s x 20 ms = 2 slots busy: pages get 4.
		{"higher class takes slots", []time.Duration{20 * ms, 20 * ms}, []float64{100, 0}, []int{0, 6}, 1, false, 6, 30 * ms, true},
		// queued control goes first: its work counts for a page.
		{"higher class queued ahead", []time.Duration{40 * ms, 20 * ms}, []float64{0, 0}, []int{3, 0}, 1, false, 6, 20 * ms, true},
		// a control arrival does not wait for queued pages.
		{"lower class not ahead", []time.Duration{20 * ms, 20 * ms}, []float64{0, 0}, []int{0, 60}, 0, false, 6, 0, true},
		{"starved", []time.Duration{20 * ms, 20 * ms}, []float64{400, 0}, []int{0, 1}, 1, false, 6, time.Hour, true},
		// lc: one FIFO, every class ahead, no class takes slots first.
		{"one fifo", []time.Duration{20 * ms, 20 * ms}, []float64{400, 0}, []int{3, 3}, 0, true, 6, 20 * ms, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newAdmission(len(tt.svc))
			copy(a.svc, tt.svc)
			copy(a.lambda, tt.lambda)
			got, ok := a.wait(tt.class, tt.depth, tt.one, tt.slots, 0)
			if ok != tt.ok || (ok && got != tt.want) {
				t.Fatalf("wait = %v, %v; want %v, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestAdmissionRates(t *testing.T) {
	a := newAdmission(2)
	now := time.Unix(0, 0)
	a.arrive(0, now) // opens the window
	for i := range 20 {
		a.arrive(0, now.Add(time.Duration(i)*5*time.Millisecond)) // 200/s for 100 ms
	}
	a.arrive(1, now.Add(100*time.Millisecond)) // rolls the window
	if a.lambda[0] < 0.3*150 || a.lambda[0] > 0.3*250 {
		t.Fatalf("control rate %v after one window of ~200/s, want a third of it (alpha 0.3)", a.lambda[0])
	}
	a.served(1, 20*time.Millisecond)
	a.served(1, 40*time.Millisecond)
	if a.svc[1] != 26*time.Millisecond {
		t.Fatalf("service time %v, want 20ms moved 30%% toward 40ms", a.svc[1])
	}
}
