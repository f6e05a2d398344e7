package sim

import (
	"fmt"
	"time"

	"github.com/ews-firmware/ews/state"
)

// msgRing is how many of the last messages a trace keeps.
const msgRing = 40

// trace keeps a run's events (nemesis, claims, step-downs, follows,
// warnings) in full and its last messages, for a failing seed's report.
type trace struct {
	events []string
	msgs   [msgRing]delivered
	n      int // messages seen
}

// delivered is one message taken (or refused) by a board, formatted
// only when a trace is printed.
type delivered struct {
	at       time.Duration
	from, to int
	m        state.Message
	err      error
}

func newTrace() *trace { return &trace{} }

func (t *trace) event(at time.Duration, format string, args ...any) {
	t.events = append(t.events, fmt.Sprintf("%9v  ", at)+fmt.Sprintf(format, args...))
}

func (t *trace) msg(at time.Duration, from, to int, m state.Message, err error) {
	t.msgs[t.n%msgRing] = delivered{at, from, to, m, err}
	t.n++
}

func (d delivered) String() string {
	at, from, to, m, err := d.at, d.from, d.to, d.m, d.err
	s := fmt.Sprintf("%9v  %s -> %s %s", at, name(from), name(to), m.Type())
	switch m := m.(type) {
	case *state.TableMsg:
		s += fmt.Sprintf(" %s@%d v%d", m.Master, m.Epoch, m.Version)
	case *state.DigestMsg:
		s += fmt.Sprintf(" %s@%d v%d", m.Master, m.Epoch, m.Version)
	case *state.ReportMsg:
		s += fmt.Sprintf(" follows@%d inflight=%d %v", m.Epoch, m.InFlight, m.Runstate)
	case *state.StepDownMsg:
		s += fmt.Sprintf(" @%d", m.Epoch)
	}
	if err != nil {
		s += " refused: " + err.Error()
	}
	return s
}

// lines is the trace: every event, then the last messages.
func (t *trace) lines() []string {
	out := append([]string(nil), t.events...)
	out = append(out, fmt.Sprintf("last %d of %d messages:", min(t.n, msgRing), t.n))
	for i := max(0, t.n-msgRing); i < t.n; i++ {
		out = append(out, t.msgs[i%msgRing].String())
	}
	return out
}
