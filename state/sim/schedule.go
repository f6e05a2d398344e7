package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Shape is the network's shape during an episode.
type Shape uint8

const (
	Whole   Shape = iota // every board hears every other
	Split                // two sides, each whole
	Isolate              // one board cut off from the rest
	Bridge               // two sides and one board that hears both: not transitive
	OneWay               // one board's messages to another are lost, the other way not
)

func (s Shape) String() string {
	return [...]string{"whole", "split", "isolate", "bridge", "one-way"}[s]
}

// Episode is one stretch of the nemesis: at its start, boards crash, stop
// (a graceful shutdown with a step-down) or restart, and the network takes
// its shape and faults for Len.
type Episode struct {
	Len     time.Duration
	Shape   Shape
	Side    []int // Split: the boards of one side; Isolate: the board; Bridge: one side; OneWay: the sender
	Bridge  int   // Bridge: the board that hears both sides; OneWay: the board that does not hear Side[0]
	Faults  Faults
	Crash   []int // killed at once (kill -9)
	Stop    []int // shut down gracefully: a master steps down first
	Restart []int // started again (a fresh Election)
	// Members: membership catches up at the episode's start: every board
	// is told MemberLeft of each board it cannot hear or that is down, and
	// MemberJoined of the others (memberlist's suspicion, compressed).
	Members bool
}

// cut reports whether a and b are on different sides of the episode's shape.
func (ep *Episode) cut(a, b int) bool {
	in := func(x int) bool {
		for _, s := range ep.Side {
			if s == x {
				return true
			}
		}
		return false
	}
	switch ep.Shape {
	case Split, Isolate:
		return in(a) != in(b)
	case Bridge:
		if a == ep.Bridge || b == ep.Bridge {
			return false
		}
		return in(a) != in(b)
	case OneWay:
		return a == ep.Side[0] && b == ep.Bridge
	}
	return false
}

// transitive reports whether "hears" is an equivalence in this shape: its
// sides are the sets of boards that hear each other.
func (ep *Episode) transitive() bool { return ep.Shape != Bridge && ep.Shape != OneWay }

func (ep *Episode) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%v %s", ep.Len.Round(time.Millisecond), ep.Shape)
	if ep.Shape != Whole {
		fmt.Fprintf(&b, "%v", names(ep.Side))
	}
	switch ep.Shape {
	case Bridge:
		fmt.Fprintf(&b, " via %s", name(ep.Bridge))
	case OneWay:
		fmt.Fprintf(&b, " not heard by %s", name(ep.Bridge))
	}
	if ep.Members {
		b.WriteString(" members")
	}
	if ep.Faults.calm() {
		b.WriteString(" calm")
	} else {
		fmt.Fprintf(&b, " drop=%.2f dup=%.2f delay≤%v", ep.Faults.Drop, ep.Faults.Dup, ep.Faults.MaxDelay.Round(time.Millisecond))
	}
	for _, x := range []struct {
		what   string
		boards []int
	}{{"crash", ep.Crash}, {"stop", ep.Stop}, {"restart", ep.Restart}} {
		if len(x.boards) > 0 {
			fmt.Fprintf(&b, " %s%v", x.what, names(x.boards))
		}
	}
	return b.String()
}

func name(r int) string { return fmt.Sprintf("ews%d", r+1) }

func names(rs []int) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = name(r)
	}
	return out
}

// schedule draws a run's episodes from rng: about total of nemesis. Calm
// episodes of a transitive shape are often long enough for the liveness
// bound (settle), so invariant 2's "one master within tmax + 2 heartbeats"
// is checked inside the run as well as after the final heal.
//
// asym, when set, turns some whole episodes into one-way ones (a stream of
// its own: Config.OneWay).
func schedule(rng, asym *rand.Rand, n int, total, settle time.Duration) []Episode {
	var eps []Episode
	for at := time.Duration(0); at < total; {
		ep := Episode{Len: 300*time.Millisecond + time.Duration(rng.Int64N(int64(3*time.Second)))}
		switch p := rng.Float64(); {
		case p < 0.35:
			ep.Shape = Whole
		case p < 0.65:
			ep.Shape = Split
			perm := rng.Perm(n)
			ep.Side = perm[:1+rng.IntN(n-1)]
		case p < 0.85:
			ep.Shape = Isolate
			ep.Side = []int{rng.IntN(n)}
		default:
			if n < 3 {
				ep.Shape = Whole
				break
			}
			ep.Shape = Bridge
			perm := rng.Perm(n)
			ep.Bridge = perm[0]
			ep.Side = perm[1 : 2+rng.IntN(n-2)]
		}
		if rng.Float64() < 0.5 {
			ep.Faults = Faults{
				Drop:     rng.Float64() * 0.4,
				Dup:      rng.Float64() * 0.2,
				MaxDelay: time.Duration(rng.Int64N(int64(300 * time.Millisecond))),
			}
		} else if ep.transitive() && rng.Float64() < 0.6 {
			ep.Len = settle + time.Duration(rng.Int64N(int64(2*time.Second)))
		}
		switch p := rng.Float64(); {
		case p < 0.2:
			ep.Crash = []int{rng.IntN(n)}
		case p < 0.3:
			ep.Stop = []int{rng.IntN(n)}
		}
		if rng.Float64() < 0.35 {
			ep.Restart = []int{rng.IntN(n)}
		}
		ep.Members = rng.Float64() < 0.3
		if asym != nil && asym.Float64() < 0.15 && ep.Shape == Whole {
			// from a stream of its own: the other draws, and so the seeds
			// found before one-way links, stay as they were
			perm := asym.Perm(n)
			ep.Shape, ep.Side, ep.Bridge = OneWay, perm[:1], perm[1]
		}
		eps = append(eps, ep)
		at += ep.Len
	}
	return eps
}
