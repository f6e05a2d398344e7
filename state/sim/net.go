package sim

import (
	"container/heap"
	"math/rand/v2"
	"time"
)

// Faults is what the network does to a message while an episode lasts.
type Faults struct {
	Drop     float64       // share of messages lost
	Dup      float64       // share of messages delivered twice
	MaxDelay time.Duration // extra delay on top of one tick, drawn per copy: copies reorder
}

// calm reports whether the network delivers every message, once, one tick
// later: the network the invariants' bounds are stated for.
func (f Faults) calm() bool { return f.Drop == 0 && f.Dup == 0 && f.MaxDelay == 0 }

// packet is one copy of a message on its way.
type packet struct {
	at       time.Time
	seq      uint64 // send order: ties at one instant deliver in it
	from, to int
	b        []byte
}

// Net is the simulated network: a queue of packets by delivery time, the
// cut links, and the faults of the current episode. Every random draw
// comes from its own generator, so a run repeats from its seed.
type Net struct {
	q      packets
	seq    uint64
	cut    [][]bool // [from][to]
	faults Faults
	tick   time.Duration
	rng    *rand.Rand
	// Sent, Lost, Doubled count copies, for the run's figures.
	Sent, Lost, Doubled int
}

func newNet(n int, tick time.Duration, rng *rand.Rand) *Net {
	c := make([][]bool, n)
	for i := range c {
		c[i] = make([]bool, n)
	}
	return &Net{cut: c, tick: tick, rng: rng}
}

// Cut reports whether messages from a to b are lost.
func (nt *Net) Cut(a, b int) bool { return nt.cut[a][b] }

// hear reports whether a and b hear each other (both ways).
func (nt *Net) hear(a, b int) bool { return !nt.cut[a][b] && !nt.cut[b][a] }

// setCut makes the links of cut the only ones lost.
func (nt *Net) setCut(cut func(a, b int) bool) {
	for a := range nt.cut {
		for b := range nt.cut[a] {
			nt.cut[a][b] = a != b && cut(a, b)
		}
	}
}

// send queues b from a to c: lost on a cut link or by the episode's
// drop, else one tick later plus a random delay, perhaps twice.
func (nt *Net) send(now time.Time, from, to int, b []byte) {
	nt.Sent++
	if nt.cut[from][to] {
		return
	}
	f := nt.faults
	if f.Drop > 0 && nt.rng.Float64() < f.Drop {
		nt.Lost++
		return
	}
	copies := 1
	if f.Dup > 0 && nt.rng.Float64() < f.Dup {
		copies = 2
		nt.Doubled++
	}
	for range copies {
		at := now.Add(nt.tick)
		if f.MaxDelay > 0 {
			at = at.Add(time.Duration(nt.rng.Int64N(int64(f.MaxDelay) + 1)))
		}
		nt.seq++
		heap.Push(&nt.q, packet{at: at, seq: nt.seq, from: from, to: to, b: b})
	}
}

// due pops the next packet due at or before now.
func (nt *Net) due(now time.Time) (packet, bool) {
	if len(nt.q) == 0 || nt.q[0].at.After(now) {
		return packet{}, false
	}
	return heap.Pop(&nt.q).(packet), true
}

// packets is a min-heap by (at, seq).
type packets []packet

func (p packets) Len() int { return len(p) }
func (p packets) Less(i, j int) bool {
	if !p[i].at.Equal(p[j].at) {
		return p[i].at.Before(p[j].at)
	}
	return p[i].seq < p[j].seq
}
func (p packets) Swap(i, j int) { p[i], p[j] = p[j], p[i] }
func (p *packets) Push(x any)   { *p = append(*p, x.(packet)) }
func (p *packets) Pop() any {
	old := *p
	x := old[len(old)-1]
	*p = old[:len(old)-1]
	return x
}
