package dispatch

import (
	"time"

	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

// Boards converts the boards' rows to the dispatcher's view, appending to
// dst (pass dst[:0] to reuse it); rt gives a board's response time from
// the master's probes (nil or 0: unknown). Only running boards with an
// HTTP address get new requests. Rows without a name are skipped.
func Boards(dst []sched.Board, rows []state.Board, rt func(name string) time.Duration) []sched.Board {
	for i := range rows {
		r := &rows[i]
		if r.Name == "" {
			continue
		}
		b := sched.Board{
			Name:     r.Name,
			Rank:     r.Rank,
			Addr:     r.HTTP,
			Capacity: max(r.Capacity, 0),
			Weight:   float64(r.Weight),
			Running:  r.Runstate == state.Running && r.HTTP != "",
			Load:     sched.Load{CPU: r.Load.CPU, Mem: r.Load.Mem, Net: r.Load.Net, Disk: r.Load.Disk},
			Linknum:  r.Linknum,
		}
		if rt != nil {
			b.RT = rt(r.Name)
		}
		dst = append(dst, b)
	}
	return dst
}

// Update hands the rows to d: d.Update(Boards(nil, rows, rt)). Call it on
// every table change or heartbeat while this board is master.
func Update(d *sched.Dispatcher, rows []state.Board, rt func(name string) time.Duration) {
	if d == nil {
		return
	}
	d.Update(Boards(make([]sched.Board, 0, len(rows)), rows, rt))
}
