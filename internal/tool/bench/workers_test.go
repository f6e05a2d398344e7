package bench

import (
	"sync/atomic"
	"testing"
	"time"
)

func TestWorkersStartOnlyWhenAllBusyAndEndAfterClose(t *testing.T) {
	release := make(chan struct{})
	started := make(chan int, 100)
	var ran atomic.Int64
	p := newWorkers(10, func(j job) {
		started <- j.cls
		<-release
		ran.Add(1)
	})
	for i := range 3 { // three jobs that block: three workers
		p.dispatch(job{cls: i})
		<-started
	}
	if len(p.all) != 3 {
		t.Fatalf("%d workers for 3 blocked jobs, want 3", len(p.all))
	}
	for range 3 {
		release <- struct{}{}
	}
	// Wait until all three are idle again, then more jobs must reuse them.
	deadline := time.Now().Add(5 * time.Second)
	for len(p.idle) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("workers not idle after their jobs: %d idle", len(p.idle))
		}
		time.Sleep(time.Millisecond) // polling with a deadline
	}
	close(release)
	for i := range 3 {
		p.dispatch(job{cls: 10 + i})
		<-started
	}
	if len(p.all) != 3 {
		t.Errorf("%d workers after reuse, want still 3", len(p.all))
	}
	p.close()
	p.wait()
	if ran.Load() != 6 {
		t.Errorf("%d jobs ran, want 6", ran.Load())
	}
}
