package durable

import (
	"log/slog"
	"time"
)

// FillDefaults fills what the options of a store on the log (confstore's,
// users') leave unset: slog's default logger, the wall clock, and the
// state of a board alone.
func FillDefaults(log **slog.Logger, now *func() time.Time, st *State) {
	if *log == nil {
		*log = slog.Default()
	}
	if *now == nil {
		*now = time.Now
	}
	if *st == nil {
		*st = NewAlone(*log)
	}
}
