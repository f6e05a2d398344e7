package demo

import (
	"context"
	"fmt"
	"io"
)

// watcher prints the master each time it changes, with a ready-to-paste
// `kill -9` line, so a takeover can be watched in the UI in two minutes.
type watcher struct {
	procs  []*proc
	out    io.Writer
	master string
	epoch  uint64
}

// check asks the first live board that answers who the master is.
func (w *watcher) check(ctx context.Context) {
	for _, p := range w.procs {
		if !p.alive() {
			continue
		}
		if m, epoch := master(ctx, "http://"+p.HTTP); m != "" {
			w.saw(m, epoch)
			return
		}
	}
}

// saw records the master m at epoch and prints it if it is new.
func (w *watcher) saw(m string, epoch uint64) {
	if m == w.master {
		return
	}
	if w.master == "" {
		fmt.Fprintf(w.out, "master: %s\n", m)
	} else {
		fmt.Fprintf(w.out, "master: %s (epoch %d), took over from %s\n", m, epoch, w.master)
	}
	w.master, w.epoch = m, epoch
	for _, p := range w.procs {
		if p.Name == m && p.alive() && len(liveNames(w.procs)) > 1 {
			fmt.Fprintf(w.out, "to watch a takeover, open a follower's URL and run:  kill -9 %d   # %s, the master\n", p.pid(), m)
		}
	}
}
