package state

import "github.com/ews-firmware/ews/state/row"

// Runstate is what the master knows of a board's ability to take requests
// (row.Runstate; a number on the wire: ONLY APPEND TO row's list).
type Runstate = row.Runstate

// The runstates (row's).
const (
	Joining    = row.Joining    // fresh start; the master sets it running with linknum 0
	Running    = row.Running    // takes requests up to its capacity
	Overloaded = row.Overloaded // a health check says overloaded: no new requests
	Down       = row.Down       // silent for tthreshold or unhealthy: runstate infinity
	Revoked    = row.Revoked    // on the list of revoked boards: marked in a board's view only
)

// ParseRunstate maps "joining", "running", "overloaded", "down", "revoked" to a Runstate.
// Anything else is an error (callers usually treat it as down).
func ParseRunstate(s string) (Runstate, error) { return row.ParseRunstate(s) }
