package sched

import "time"

// The Dispatcher's correction of adaptive's stop (001 §3.1: "if
// (MaxLoadValue>管理闕值) stop Server[i] 一定時間") for figures that are one
// report old and noisy (docs/NOTES.md, Policies: adaptive). The paper
// measured every 15 s and stopped for about as long; ews's boards report
// every 100 ms, and two things herded:
//
//   - a stop held a board for `suspend` on the figure of one report,
//     though its next reports said it was idle: a third of the cluster
//     out for 150 reports while the others took everything. So a stopped
//     board comes back at its first report at or under the threshold
//     (the figure that stopped it no longer holds; `suspend` stays the
//     longest stop);
//   - on equal boards every board's 100 ms figure crosses the threshold
//     from about half load, and stopping the most loaded one sent its
//     whole share onto boards as loaded. So the most loaded board is
//     stopped only when the others can take what it runs and stay at or
//     under the threshold.
//
// load[i], the threshold test and one stop at a time are the paper's.

// stopMove is what the Dispatcher knows of a board at its last report for
// the stop: its in-flight requests averaged over the report's interval
// and the cpu one request takes on it (stale_learn.go).
type stopMove struct {
	n, unit float64
}

// note keeps what a stop of b would move.
func (p *Adaptive) note(b *Board) {
	if !p.Fresh {
		return
	}
	if n := b.idx + 1; n > len(p.moved) {
		p.moved = append(p.moved, make([]stopMove, n-len(p.moved))...)
	}
	m := stopMove{n: float64(max(b.reported, 0))}
	if b.flights.ok {
		m.n = b.flights.mean
	}
	if b.Capacity > 0 {
		m.unit = b.cost.unit(b.Capacity)
	}
	p.moved[b.idx] = m
}

// othersTake reports whether the boards reported within the suspend time
// and since i's previous report, board i left out, can take i's requests
// and stay at or under the threshold on average: Σ load_j + w_cpu/base_cpu
// · n_i · ū ≤ k·threshold over the k others, ū their mean cpu per request.
// The others' unit, not i's: a board with a cpu hog learns a unit that
// counts the hog. A figure from before i's previous report describes an
// earlier period than i's own: at 15 s reports the others' last figures
// were those of the idle start, and the first board to report a full
// interval was stopped onto boards as loaded (2.35× lc's p99).
func (p *Adaptive) othersTake(i int, now time.Time) bool {
	k, sum, units := 0, 0.0, 0.0
	for j := range p.at {
		if j == i || p.at[j].IsZero() || now.Sub(p.at[j]) > p.suspend || j >= len(p.moved) || !p.at[j].After(p.prev[i]) {
			continue
		}
		k++
		sum += p.load[j]
		units += p.moved[j].unit
	}
	if k == 0 || i >= len(p.moved) {
		return false
	}
	add := p.model.w[0] / p.model.base[0] * p.moved[i].n * units / float64(k)
	return sum+add <= float64(k)*p.threshold
}
