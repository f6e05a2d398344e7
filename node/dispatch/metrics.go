package dispatch

import (
	"github.com/ews-firmware/ews/internal/promx"

	"github.com/prometheus/client_golang/prometheus"
)

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
	forwarded *prometheus.CounterVec // target, outcome
	errors    *prometheus.CounterVec // target
	retries   prometheus.Counter
	// authRefused counts 401s from boards to dispatched requests, by target.
	authRefused *prometheus.CounterVec
	refused     *prometheus.CounterVec // reason
	added       prometheus.Histogram
	held        *prometheus.CounterVec // outcome: ok (handed to the next master) or error (503)
	holding     prometheus.Gauge       // requests held now
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		forwarded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ews_dispatch_forwarded_total",
			Help: "Requests this board sent to another board (the master to the chosen board, a non-master to the master), by target and outcome.",
		}, []string{"target", "outcome"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ews_dispatch_proxy_errors_total",
			Help: "Forwarded requests whose target failed (refused, reset, garbage, response header timeout), by target.",
		}, []string{"target"}),
		authRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ews_dispatch_auth_refused_total",
			Help: "Requests the master dispatched that their board refused with 401 although the master accepted the credentials: the board's credentials differ (answered 502), by target.",
		}, []string{"target"}),
		retries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "ews_dispatch_retries_total",
			Help: "Idempotent requests retried on another board after their board failed.",
		}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ews_dispatch_marks_refused_total",
			Help: "Requests refused for a bad dispatch mark, by reason.",
		}, []string{"reason"}),
		held: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "ews_dispatch_held_total",
			Help: "Requests a non-master held while no master could take them (unreachable or unknown), by outcome: ok = handed to the next master, error = 503.",
		}, []string{"outcome"}),
		holding: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ews_dispatch_holding",
			Help: "Requests a non-master holds now, waiting for a master that can take them.",
		}),
		added: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "ews_dispatch_added_seconds",
			Help:    "Time the master adds before a request leaves for its board: queue wait, choice and signing.",
			Buckets: []float64{50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 500e-3, 1, 2.5, 5},
		}),
	}
	if reg != nil {
		m.forwarded = promx.Register(reg, m.forwarded)
		m.errors = promx.Register(reg, m.errors)
		m.retries = promx.Register(reg, m.retries)
		m.authRefused = promx.Register(reg, m.authRefused)
		m.refused = promx.Register(reg, m.refused)
		m.added = promx.Register(reg, m.added)
		m.held = promx.Register(reg, m.held)
		m.holding = promx.Register(reg, m.holding)
	}
	return m
}
