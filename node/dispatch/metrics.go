package dispatch

import "github.com/ews-firmware/ews/internal/promx"

// Outcomes of a forwarded request (label "outcome").
const (
	OutcomeOK       = "ok"       // the target's answer went back to the client
	OutcomeError    = "error"    // the target failed: 502
	OutcomeRetried  = "retried"  // the target failed; the request went to another board
	OutcomeCanceled = "canceled" // the client left first
	OutcomeRedirect = "redirect" // redirect mode: 307 to the target
)

// metrics are the Front's Prometheus series.
type metrics struct {
	forwarded *promx.Vec[*promx.Counter] // target, outcome
	errors    *promx.Vec[*promx.Counter] // target
	retries   *promx.Counter
	// authRefused counts 401s from boards to dispatched requests, by target.
	authRefused *promx.Vec[*promx.Counter]
	refused     *promx.Vec[*promx.Counter] // reason
	added       *promx.Histogram
	held        *promx.Vec[*promx.Counter] // outcome: ok (handed to the next master) or error (503)
	holding     *promx.Gauge               // requests held now
	assigned    *promx.Counter             // redirect mode: requests run here on a client's assignment
	back        *promx.Vec[*promx.Counter] // reason: assigned clients sent back to the master
}

func newMetrics(reg *promx.Registry) *metrics {
	return &metrics{
		forwarded: reg.CounterVec("ews_dispatch_forwarded_total",
			"Requests this board sent to another board (the master to the chosen board, a non-master to the master), by target and outcome.",
			"target", "outcome"),
		errors: reg.CounterVec("ews_dispatch_proxy_errors_total",
			"Forwarded requests whose target failed (refused, reset, garbage, response header timeout), by target.", "target"),
		authRefused: reg.CounterVec("ews_dispatch_auth_refused_total",
			"Requests the master dispatched that their board refused with 401 although the master accepted the credentials: the board's credentials differ (answered 502), by target.",
			"target"),
		retries: reg.Counter("ews_dispatch_retries_total", "Idempotent requests retried on another board after their board failed."),
		refused: reg.CounterVec("ews_dispatch_marks_refused_total", "Requests refused for a bad dispatch mark, by reason.", "reason"),
		held: reg.CounterVec("ews_dispatch_held_total",
			"Requests a non-master held while no master could take them (unreachable or unknown), by outcome: ok = handed to the next master, error = 503.",
			"outcome"),
		assigned: reg.Counter("ews_dispatch_assigned_total",
			"Redirect mode: requests this board ran for a client the master assigned to it, without the master."),
		back: reg.CounterVec("ews_dispatch_assign_back_total",
			"Redirect mode: assigned clients this board sent back to the master, by reason (expired forged other client full not-ready).",
			"reason"),
		holding: reg.Gauge("ews_dispatch_holding", "Requests a non-master holds now, waiting for a master that can take them."),
		added: reg.Histogram("ews_dispatch_added_seconds",
			"Time the master adds before a request leaves for its board: queue wait, choice and signing.",
			[]float64{50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1, 2.5, 5}),
	}
}
