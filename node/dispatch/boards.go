package dispatch

import (
	"time"

	"github.com/ews-firmware/ews/sched"
)

// Runstates of the replicated table (DESIGN.md); only RunstateRunning
// boards get new requests.
const (
	RunstateJoining    = "joining"
	RunstateRunning    = "running"
	RunstateOverloaded = "overloaded"
	RunstateDown       = "down"
)

// BoardRow is one row of the cluster table as the dispatcher needs it; the
// lead maps the state package's rows onto it.
type BoardRow struct {
	Name     string
	Rank     int
	HTTP     string // host:port other boards and clients can dial (not ":8080")
	Capacity int
	Weight   float64
	Runstate string // joining | running | overloaded | down
	// Linknum is the board's own report of the requests it runs
	// (Front.InFlight on that board); negative: no report yet.
	Linknum int
	Load    sched.Load    // cpu, mem, net, disk as fractions of 1
	RT      time.Duration // response time from the master's probes; 0 unknown
}

// Boards converts rows to the dispatcher's view, appending to dst (pass
// dst[:0] to reuse it). Rows without a name are skipped.
func Boards(dst []sched.Board, rows []BoardRow) []sched.Board {
	for i := range rows {
		r := &rows[i]
		if r.Name == "" {
			continue
		}
		dst = append(dst, sched.Board{
			Name:     r.Name,
			Rank:     r.Rank,
			Addr:     r.HTTP,
			Capacity: max(r.Capacity, 0),
			Weight:   r.Weight,
			Running:  r.Runstate == RunstateRunning && r.HTTP != "",
			Load:     r.Load,
			RT:       r.RT,
			Linknum:  r.Linknum,
		})
	}
	return dst
}

// Update hands the table to d: d.Update(Boards(nil, rows)). Call it on
// every table change or heartbeat while this board is master.
func Update(d *sched.Dispatcher, rows []BoardRow) {
	if d == nil {
		return
	}
	d.Update(Boards(make([]sched.Board, 0, len(rows)), rows))
}
