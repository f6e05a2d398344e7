package dispatch

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/ews-firmware/ews/sched"
)

// fakePlacer answers Place from a script, one step per call, and counts
// what it was asked.
type fakePlacer struct {
	steps    []placeStep
	places   int
	released int
	held     bool // what its last answer holds, until Release
	ended    int  // attempts it was told of
	idle     int  // Release calls with nothing held
}

type placeStep struct {
	to   target
	next Placer
	err  error
}

func (p *fakePlacer) Place(_ context.Context, rt *route) (Placer, error) {
	s := p.steps[p.places]
	p.places++
	if s.next != nil || s.err != nil {
		return s.next, s.err
	}
	rt.to = s.to
	rt.to.header, rt.to.token = HeaderMark, "test"
	p.held = true // something held
	return nil, nil
}

func (p *fakePlacer) Start(w http.ResponseWriter, rt *route) (try, bool) {
	return try{leg: legBoard, replay: true, idempotent: rt.in.r.Method == http.MethodGet, movable: true}, false
}

func (p *fakePlacer) Failed(*route, verdict, error) { p.ended++ }

func (p *fakePlacer) Release(_ *route, answered bool) {
	if answered {
		p.ended++
	}
	if !p.held {
		p.idle++
	}
	if p.held {
		p.released++
		p.held = false
	}
}

// The loop asks the Placer before each attempt, releases what each
// placement held exactly once, sends a failed request again only where
// tryAgain says so, and follows a Placer that hands the request on.
func TestRoute(t *testing.T) {
	dead := target{board: "ews2", addr: "127.0.0.1:1"} // refused: never ran
	self := target{board: "ews1", self: true}
	shed := &sched.ErrShed{Class: "browse", Reason: "full"}
	tests := []struct {
		name         string
		method       string
		first, other []placeStep // other: the Placer first hands it to
		want         int
		ran          bool
		places       [2]int // Place calls of first and other
	}{
		{name: "runs here", method: "GET", first: []placeStep{{to: self}}, want: 200, ran: true, places: [2]int{1, 0}},
		{name: "a board that never got it: placed again", method: "GET", first: []placeStep{{to: dead}, {to: self}}, want: 200, ran: true, places: [2]int{2, 0}},
		{name: "placed again once only", method: "GET", first: []placeStep{{to: dead}, {to: dead}}, want: 503, places: [2]int{2, 0}},
		{name: "no board for the retry", method: "GET", first: []placeStep{{to: dead}, {err: shed}}, want: 503, places: [2]int{2, 0}},
		{name: "shed on entry", method: "GET", first: []placeStep{{err: shed}}, want: 503, places: [2]int{1, 0}},
		{name: "handed on before it ran", method: "GET", first: []placeStep{{next: nil}}, other: []placeStep{{to: self}}, want: 200, ran: true, places: [2]int{1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ran := false
			f, err := NewFront(Options{
				Cluster: &fakeCluster{self: "ews1"}, Marker: mustMarker(t), Logger: slog.New(slog.DiscardHandler),
				Local: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { ran = true }),
			})
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			first, other := &fakePlacer{steps: tt.first}, &fakePlacer{steps: tt.other}
			if tt.other != nil {
				first.steps[0].next = other
			}
			r := httptest.NewRequest(tt.method, "/api/x", nil)
			w := httptest.NewRecorder()
			f.route(w, &route{in: inbound{r: r, self: "ews1"}}, first)
			if w.Code != tt.want || ran != tt.ran {
				t.Fatalf("status %d ran %v, want %d %v (%s)", w.Code, ran, tt.want, tt.ran, w.Body)
			}
			if first.places != tt.places[0] || other.places != tt.places[1] {
				t.Fatalf("placed %d and %d times, want %v", first.places, other.places, tt.places)
			}
			if first.released+other.released != placedCount(first)+placedCount(other) {
				t.Fatalf("released %d+%d, placed %d+%d", first.released, other.released, placedCount(first), placedCount(other))
			}
			if first.idle+other.idle != 0 {
				t.Fatalf("released %d+%d times with nothing held", first.idle, other.idle)
			}
			if sent := placedCount(first) + placedCount(other) - btoi(ran); first.ended+other.ended != sent {
				t.Fatalf("told of %d+%d attempts' ends, %d attempts sent", first.ended, other.ended, sent)
			}
		})
	}
}

// placedCount is how many of p's answers held something.
func placedCount(p *fakePlacer) int {
	n := 0
	for _, s := range p.steps[:p.places] {
		if s.next == nil && s.err == nil {
			n++
		}
	}
	return n
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
