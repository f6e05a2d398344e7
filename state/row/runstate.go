package row

import (
	"fmt"
)

// Runstate is what the master knows of a board's ability to take requests.
// The numbers travel on the wire: ONLY APPEND TO THIS LIST.
type Runstate uint8

const (
	Joining    Runstate = iota // fresh start; the master sets it running with linknum 0
	Running                    // takes requests up to its capacity
	Overloaded                 // a health check says overloaded: no new requests
	Down                       // silent for tthreshold or unhealthy: runstate infinity
	// Revoked: on the cluster's list of revoked boards (ews cluster
	// revoke); each board marks it in its own view, never on the wire,
	// which a board of an older build would refuse (docs/NOTES.md
	// "Revoking a board").
	Revoked
)

var runstateNames = [...]string{"joining", "running", "overloaded", "down", "revoked"}

func (r Runstate) String() string {
	if int(r) < len(runstateNames) {
		return runstateNames[r]
	}
	return fmt.Sprintf("runstate(%d)", uint8(r))
}

// Valid reports whether r is one of the runstates a message may carry:
// Revoked is never on the wire.
func (r Runstate) Valid() bool { return r <= Down }

// ParseRunstate maps "joining", "running", "overloaded", "down", "revoked" to a Runstate.
// Anything else is an error (callers usually treat it as down).
func ParseRunstate(s string) (Runstate, error) {
	for i, n := range runstateNames {
		if n == s {
			return Runstate(i), nil
		}
	}
	return Down, fmt.Errorf("state: unknown runstate %q (want joining, running, overloaded, down or revoked)", s)
}

// MarshalText writes the name ("running"): the runstate in /api/cluster.
func (r Runstate) MarshalText() ([]byte, error) {
	if int(r) >= len(runstateNames) {
		return nil, fmt.Errorf("state: runstate %d has no name", uint8(r))
	}
	return []byte(r.String()), nil
}

// UnmarshalText reads a name written by MarshalText.
func (r *Runstate) UnmarshalText(b []byte) error {
	v, err := ParseRunstate(string(b))
	if err != nil {
		return err
	}
	*r = v
	return nil
}
