package sched

import (
	"fmt"
	"time"
)

// Config is what the queue, the classifier and the policies are built from.
// The boot config maps [sched] onto it; DefaultConfig gives every default.
type Config struct {
	// Policy names a registered policy (PolicyNames). "priority-lc", the
	// paper's algorithm, sends control requests first and to the board
	// with the fewest in flight; other policies trade that for weights,
	// affinity or measured load.
	Policy string

	// Order is how queued requests wait: "" (the policy's own: priority
	// queues for all but lc), OrderPriority (a FIFO per class, highest class
	// first) or OrderArrival (one FIFO for every class, in arrival order, as
	// lc). Arrival order measures a policy's choice of board without the
	// priority queue's help (the papers' baselines queue in arrival order).
	Order string

	// Queue bounds each class's queue (the one FIFO holds Queue × classes).
	// A longer queue absorbs longer bursts but lets a request wait longer
	// before it is shed; a full queue sheds at once (503).
	Queue int

	// QueueTimeout is the longest a request waits for a board before it is
	// answered 503. Longer rides out a slow board; shorter tells users sooner.
	QueueTimeout time.Duration

	// QueueTarget is the sojourn above which a class fails fast: a request
	// predicted to wait longer, or arriving while the sojourn has stayed
	// above it for a CoDel interval, is refused at once. 0 turns fail-fast
	// off (requests then wait up to QueueTimeout).
	QueueTarget time.Duration

	// Reserve is the share of dispatches kept for lower classes while they
	// wait, in [0, 1). 0 is strict priority (the paper); more keeps page
	// views moving under a flood of control requests, at their expense.
	Reserve float64

	// Headroom keeps slots for the first class, so a control request does
	// not wait for a page to finish: "off" (or "", the default: lower
	// classes may take every slot), a number of slots, or "auto" (m + √m
	// rounded up, m the slots the first class not pinned to a board held
	// on average, measured: headroom.go). The first class's running
	// requests count inside those slots. It holds at any load while a
	// first-class request arrived within the last second; one slot always
	// stays open to the lower classes; and a board that such a request
	// pinned to it for an idle device keeps its last slot
	// (headroom_pinned.go). Not for one-FIFO policies (lc).
	Headroom string

	// Stale is what the Dispatcher does about load figures up to one
	// report old (stale.go): StalePlaced (or "", the default) adds what it
	// placed since the report to a board's cpu; StaleTwo draws two boards
	// and lets the policy pick the lesser; StaleReported takes the
	// figures as reported (herding between reports). Only the load-aware
	// policies read the figures; the others ignore it.
	Stale string

	// Sticky keeps a user on one board: "" (off), StickyCookie or
	// StickySourceIP. It wraps Policy, which still places new users.
	Sticky string

	// Classes are the priority classes, highest first; a request matching
	// no rule falls to the last. Empty: ClassesFor(Policy).
	Classes []Class

	// Devices are the cluster's devices: a request for one takes a board
	// slot only when the device can start it (device.go). nil: devices are
	// not scheduled, every request takes the first free slot.
	Devices []Device

	// Proximity prefers boards for clients of some networks; it wraps
	// Policy. Empty: off.
	Proximity []ProximityRule

	// The load formulas of adaptive, integrated (and proximity), qsc and
	// socket. Missing weights, baselines and limits take the documented
	// defaults of each policy: the papers' values.
	Adaptive, Integrated, QSC, Socket LoadModel
}

// Class is one priority class; the first matching rule of all classes wins.
type Class struct {
	Name  string
	Match []string // "METHOD /path/glob" or "*"; ** spans segments (CheckRule)
	// Weight is the cost of one of its requests for qsc; negative counts 0,
	// and all zero counts 1 each.
	Weight float64
}

// ProximityRule prefers some boards for the clients of one network.
type ProximityRule struct {
	CIDR   string
	Prefer []string // board names
}

// LoadModel holds the weights, baselines and limits of a load formula, keyed
// by resource (cpu mem net disk rt; req for qsc's request load;
// cpu_overload for integrated's limit, threshold for adaptive's).
type LoadModel struct {
	Weights   map[string]float64
	Baselines map[string]float64 // value that counts as load 1.0
	Limits    map[string]float64 // integrated: over a limit weighs OverWeight
	Overload  time.Duration      // integrated: cpu over cpu_overload this long: no new requests
	Suspend   time.Duration      // adaptive: how long a board over the threshold gets no new requests
}

// DefaultPolicy is the paper's algorithm.
const DefaultPolicy = "priority-lc"

// DefaultConfig returns the defaults of every field.
func DefaultConfig() Config {
	return Config{
		Policy:       DefaultPolicy,          // priority queues + least connections
		Queue:        1024,                   // per class: ~1 s of a busy 3-board cluster
		QueueTimeout: 5 * time.Second,        // a user still waits; a dead cluster answers soon enough
		QueueTarget:  100 * time.Millisecond, // fail fast above this sojourn
		Reserve:      0,                      // strict priority, as the paper
		Headroom:     HeadroomOff,            // pages may take every slot, as the paper
		Stale:        StalePlaced,            // scores see what was placed since the report
		Sticky:       "",                     // any board may serve any request
		Classes:      DefaultClasses(),       // control first, browse after
	}
}

// Values of Config.Order.
const (
	OrderPriority = "priority"
	OrderArrival  = "arrival"
)

// CheckOrder reports whether s is a value of Config.Order.
func CheckOrder(s string) error {
	switch s {
	case "", OrderPriority, OrderArrival:
		return nil
	}
	return fmt.Errorf("sched: order %q: want %s or %s", s, OrderPriority, OrderArrival)
}

// oneFIFO is whether a dispatcher under spec and order keeps one FIFO.
func oneFIFO(spec PolicySpec, order string) bool {
	switch order {
	case OrderArrival:
		return true
	case OrderPriority:
		return false
	}
	return spec.Queue == OneFIFO
}

// ClassesFor are the classes used when none are configured under policy:
// the paper's four (QSCClasses) for "qsc" and "qsc-min", whose formula weighs requests by
// class, and DefaultClasses for every other policy.
func ClassesFor(policy string) []Class {
	if policy == "qsc" || policy == "qsc-min" {
		return QSCClasses()
	}
	return DefaultClasses()
}

// DefaultClasses are the classes used when none are configured: device
// control and CGI first, everything else after.
func DefaultClasses() []Class {
	return []Class{
		{Name: "control", Match: []string{"* /api/devices/**", "* /cgi-bin/**"}, Weight: 1},
		{Name: "browse", Match: []string{"*"}, Weight: 1},
	}
}
