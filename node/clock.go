package node

import (
	"log/slog"
	"time"

	"github.com/ews-firmware/ews/internal/clock"
)

// clockFloor tells the board's clock a time no true time is earlier than
// (what names it); a clock earlier than it is wrong, and the board says so
// and counts from the floor until it measured the master's (docs/DESIGN.md,
// Time).
func clockFloor(c *clock.Clock, floor time.Time, what string, log *slog.Logger) {
	if c.SetFloor(floor) {
		log.Warn("clock: this board's clock is earlier than "+what+", so it is wrong: cluster time starts there until the master's clock is measured (docs/guide/time.md)",
			"clock", c.Local().UTC().Format(time.RFC3339), "floor", floor.UTC().Format(time.RFC3339))
	}
}
