package dispatch

import "github.com/ews-firmware/ews/internal/promx"

// Outcomes of a follower's placement (label "outcome" of
// ews_dispatch_placed_total).
const (
	PlacedOK       = "ok"       // placed: the follower forwarded it to its board itself
	PlacedShed     = "shed"     // the master's queue refused it (503)
	PlacedFallback = "fallback" // sent through the master: no placement (not master, queue closed, channel closed)
	PlacedLease    = "lease"    // run here on a slot the master leased this board, without a placement
)

// placeMetrics are the fast entry's series (fastentry.go).
type placeMetrics struct {
	placed *promx.Vec[*promx.Counter] // outcome, on a follower
	lease  *promx.Counter             // placed{outcome=lease}, the hot path's, looked up once
	served *promx.Counter             // on the master: placements it answered
}

func newPlaceMetrics(reg *promx.Registry) *placeMetrics {
	m := &placeMetrics{
		placed: reg.CounterVec("ews_dispatch_placed_total",
			"Requests this board, not master, asked the master to place over the placement channel, by outcome: ok (placed; forwarded by this board to its board, or run here), shed, fallback (sent through the master), lease (run here on a slot the master leased this board, without asking).",
			"outcome"),
		served: reg.Counter("ews_dispatch_placements_total",
			"Placements this board answered as master over followers' placement channels (placed or shed)."),
	}
	m.lease = m.placed.WithLabelValues(PlacedLease)
	return m
}
