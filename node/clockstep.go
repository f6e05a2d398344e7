package node

import (
	"errors"
	"time"
)

// StepClock sets this board's [sim] clock_offset while it runs: its wall
// clock jumps, as a board's does when its RTC is set by hand (`ews run`
// does it on SIGUSR1, from the config file read again). Only a board with
// a [sim] section has an offset to step; any other refuses, so a real
// board's clock is never moved this way.
func (n *Node) StepClock(offset time.Duration) error {
	if n.boot.Sim == nil {
		return errors.New("node: the clock steps only on a simulated board ([sim] clock_offset)")
	}
	old := n.boot.Clock.Offset()
	n.boot.Clock.SetOffset(offset)
	n.log.Warn("clock: stepped while running ([sim] clock_offset read again)", "from", old.String(), "to", offset.String())
	return nil
}
