package testbed

import (
	"testing"
	"time"
)

// finishTimes runs a board tick by tick (1 ms) until it is empty and
// returns each request's finish time by its user number.
func finishTimes(t *testing.T, b *board, start time.Duration) map[int]time.Duration {
	t.Helper()
	out := map[int]time.Duration{}
	for now := start; b.inFlight() > 0; now += time.Millisecond {
		if now > start+time.Minute {
			t.Fatal("board never emptied")
		}
		for _, j := range b.step(now, time.Millisecond) {
			out[j.req.user] = now + time.Millisecond - start
		}
	}
	return out
}

func TestBoardModel(t *testing.T) {
	page := &Class{Name: "page", Work: 10 * time.Millisecond}
	read := &Class{Name: "read", Work: 20 * time.Millisecond, IO: true}
	cached := &Class{Name: "cached", Cached: true}
	req := func(user int, c *Class) *request { return &request{user: user, class: c, counts: true} }
	tests := []struct {
		name string
		spec BoardSpec
		at   time.Duration // when the requests arrive
		reqs []*request
		want map[int]time.Duration
		shed int // requests refused
		hits uint64
	}{
		{"one page alone", BoardSpec{Workers: 1}, 0, []*request{req(0, page)}, map[int]time.Duration{0: 10 * time.Millisecond}, 0, 0},
		{"two pages share one worker: both take twice as long", BoardSpec{Workers: 1}, 0,
			[]*request{req(0, page), req(1, page)}, map[int]time.Duration{0: 20 * time.Millisecond, 1: 20 * time.Millisecond}, 0, 0},
		{"two pages on two workers: no slowdown", BoardSpec{Workers: 2}, 0,
			[]*request{req(0, page), req(1, page)}, map[int]time.Duration{0: 10 * time.Millisecond, 1: 10 * time.Millisecond}, 0, 0},
		{"a device read takes no worker", BoardSpec{Workers: 1}, 0,
			[]*request{req(0, page), req(1, read)}, map[int]time.Duration{0: 10 * time.Millisecond, 1: 20 * time.Millisecond}, 0, 0},
		{"slots full: the third waits in the backlog", BoardSpec{Workers: 2, Slots: 2}, 0,
			[]*request{req(0, page), req(1, page), req(2, page)}, map[int]time.Duration{0: 10 * time.Millisecond, 1: 10 * time.Millisecond, 2: 20 * time.Millisecond}, 0, 0},
		{"backlog full: refused", BoardSpec{Slots: 1, Backlog: 1}, 0,
			[]*request{req(0, page), req(1, page), req(2, page)}, map[int]time.Duration{0: 10 * time.Millisecond, 1: 20 * time.Millisecond}, 1, 0},
		{"busy window slows a device read 10x", BoardSpec{BusyFor: time.Second}, 0,
			[]*request{req(0, read)}, map[int]time.Duration{0: 200 * time.Millisecond}, 0, 0},
		{"busy window slows a page at half speed 10x", BoardSpec{Speed: 0.5, BusyAt: time.Second, BusyFor: time.Second}, time.Second,
			[]*request{req(0, page)}, map[int]time.Duration{0: 200 * time.Millisecond}, 0, 0},
		{"cache: first request of a user cold, the next warm", BoardSpec{CacheUsers: 4, Cold: 40 * time.Millisecond, Warm: 8 * time.Millisecond, Slots: 1}, 0,
			[]*request{req(0, cached), req(0, cached)}, map[int]time.Duration{0: 48 * time.Millisecond}, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBoard(tc.spec)
			shed := 0
			for _, r := range tc.reqs {
				if !b.admit(r) {
					shed++
				}
			}
			got := finishTimes(t, b, tc.at)
			if shed != tc.shed || b.hits != tc.hits {
				t.Fatalf("shed %d hits %d, want %d %d", shed, b.hits, tc.shed, tc.hits)
			}
			for u, w := range tc.want {
				if got[u] != w {
					t.Fatalf("user %d finished at %v, want %v (all: %v)", u, got[u], w, got)
				}
			}
		})
	}
}

func TestCacheEvictsLeastRecent(t *testing.T) {
	c := &Class{Cached: true}
	b := newBoard(BoardSpec{CacheUsers: 2, Cold: time.Millisecond, Warm: time.Millisecond})
	for _, u := range []int{1, 2, 1, 3, 1, 2} { // 2 is evicted by 3; 1 stays warm
		b.admit(&request{user: u, class: c, counts: true})
	}
	if b.hits != 2 || b.pages != 6 {
		t.Fatalf("hits %d of %d, want 2 of 6", b.hits, b.pages)
	}
}

// TestReportedCPUIsTheIntervalsAverage: a board reports its cpu averaged
// over the interval since its last report, so a board busy for a moment
// is told from a saturated one and from one another process holds; the
// instant at the report said 100 % for any board running two pages then.
func TestReportedCPUIsTheIntervalsAverage(t *testing.T) {
	page := &Class{Name: "page", Work: 10 * time.Millisecond}
	long := &Class{Name: "long", Work: time.Second}
	const interval = 100 * time.Millisecond
	tests := []struct {
		name  string
		spec  BoardSpec
		reqs  []*Class // arriving at the interval's start
		want  float64
		loose float64 // the instant at 10 ms, what the board used to report
		runQ  float64 // at the report: the requests that want the cpu
	}{
		{"idle: the background", BoardSpec{Workers: 2}, nil, 0.05, 0.05, 0},
		{"two 10 ms pages on two workers: busy a tenth of it", BoardSpec{Workers: 2}, []*Class{page, page}, 0.05 + 0.95*0.1, 1, 0},
		{"saturated the whole interval", BoardSpec{Workers: 2}, []*Class{long, long, long}, 1, 1, 3},
		{"held by another process, no request", BoardSpec{Workers: 2, BusyFor: time.Hour}, nil, 0.9, 0.9, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := newBoard(tc.spec)
			for i, c := range tc.reqs {
				b.admit(&request{user: i, class: c})
			}
			var instant float64
			for now := time.Duration(0); now < interval; now += time.Millisecond {
				if now == 9*time.Millisecond {
					instant = b.cpu(now)
				}
				b.step(now, time.Millisecond)
			}
			l := b.load(interval)
			if l.RunQueue != tc.runQ {
				t.Fatalf("run queue %v at the report, want %v", l.RunQueue, tc.runQ)
			}
			got := l.CPU
			if d := got - tc.want; d > 1e-6 || d < -1e-6 {
				t.Fatalf("reported cpu %.4f, want the interval's average %.4f", got, tc.want)
			}
			if d := instant - tc.loose; d > 1e-6 || d < -1e-6 {
				t.Fatalf("cpu at 9 ms %.4f, want %.4f", instant, tc.loose)
			}
			if again := b.load(interval).CPU; tc.reqs == nil && again != tc.want {
				t.Fatalf("a report right after: %.4f, want the cpu at that instant %.4f", again, tc.want)
			}
		})
	}
}
