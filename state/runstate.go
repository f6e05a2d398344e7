package state

import "fmt"

// Runstate is what the master knows of a board's ability to take requests.
// The numbers travel on the wire: ONLY APPEND TO THIS LIST.
type Runstate uint8

const (
	Joining    Runstate = iota // fresh start; the master sets it running with linknum 0
	Running                    // takes requests up to its capacity
	Overloaded                 // a health check says overloaded: no new requests
	Down                       // silent for tthreshold or unhealthy: runstate infinity
)

var runstateNames = [...]string{"joining", "running", "overloaded", "down"}

func (r Runstate) String() string {
	if int(r) < len(runstateNames) {
		return runstateNames[r]
	}
	return fmt.Sprintf("runstate(%d)", uint8(r))
}

// Valid reports whether r is one of the known runstates.
func (r Runstate) Valid() bool { return int(r) < len(runstateNames) }

// ParseRunstate maps "joining", "running", "overloaded", "down" to a Runstate.
// Anything else is an error (callers usually treat it as down).
func ParseRunstate(s string) (Runstate, error) {
	for i, n := range runstateNames {
		if n == s {
			return Runstate(i), nil
		}
	}
	return Down, fmt.Errorf("state: unknown runstate %q (want joining, running, overloaded or down)", s)
}
