package sched

import (
	"fmt"
	"time"
)

// Reasons a request is shed (answered 503 with Retry-After).
const (
	ReasonFull     = "full"     // its class's queue (and every lower one) is full
	ReasonEvicted  = "evicted"  // pushed out of a full queue by a higher class
	ReasonTimeout  = "timeout"  // waited longer than queue_timeout
	ReasonOverload = "overload" // fail fast: the class's sojourn stays above queue_target
	ReasonClosed   = "closed"   // the dispatcher stopped (master stepped down, shutdown)
	ReasonNoBoard  = "no-board" // pinned to a board the table does not know or that is down, or a retry that excludes every running board
)

// reasons indexes the shared errors and counters; keep in step with the r* indexes.
var reasons = []string{ReasonFull, ReasonEvicted, ReasonTimeout, ReasonOverload, ReasonClosed, ReasonNoBoard}

const (
	rFull = iota
	rEvicted
	rTimeout
	rOverload
	rClosed
	rNoBoard
)

// ErrShed is the answer to a request that will not be dispatched: the caller
// answers 503 with Retry-After. Values are shared and must not be modified.
type ErrShed struct {
	Reason     string
	Class      string
	RetryAfter time.Duration
}

func (e *ErrShed) Error() string {
	return fmt.Sprintf("sched: %s request shed: %s (retry after %s)", e.Class, e.Reason, e.RetryAfter)
}
