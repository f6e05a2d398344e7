package node

import (
	"log/slog"
	"sync"

	"github.com/ews-firmware/ews/node/automation"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/vip"
)

// master owns the dispatcher while this board is master: one is created
// when the board takes over and closed (every queued request answered 503)
// when it steps down. Mastership changes the board only here, on the
// cluster's change events (and once when Run starts); the front door's
// IsMaster only reads whether the front has a dispatcher.
type master struct {
	front *dispatch.Front
	log   *slog.Logger
	// newDispatcher makes the queue on each takeover; boards is the
	// table's rows it is fed; auto runs while master (nil-safe).
	newDispatcher func() (*sched.Dispatcher, error)
	boards        func() []state.Board
	auto          *automation.Automation
	policy        string       // sched.policy, for the log
	vip           vip.Follower // the virtual IP goes with mastership; guarded by mu
	mu            sync.Mutex
	d             *sched.Dispatcher // nil while not master
}

// follow keeps the dispatcher in step with the table: created on becoming
// master, fed every change, closed on stepping down. Runs on the cluster's
// goroutine (OnChange), one call at a time.
func (m *master) follow(v state.View) {
	isMaster := v.Master != "" && v.Master == v.Self
	m.mu.Lock()
	defer m.mu.Unlock()
	up := 0
	for _, b := range v.Nodes {
		if b.Runstate != state.Down {
			up++
		}
	}
	m.vip.Follow(isMaster, up)
	switch {
	case isMaster && m.d == nil:
		d, err := m.newDispatcher()
		if err != nil {
			m.log.Error("dispatch: cannot start the queue", "err", err)
			return
		}
		m.d = d
		m.update()
		m.front.SetDispatcher(d)
		m.log.Info("dispatching as master", "epoch", v.Epoch, "policy", m.policy)
		m.auto.Start()
	case isMaster:
		m.update()
	case m.d != nil:
		m.front.StepDown()
		m.auto.Stop()
		m.d = nil
		m.log.Info("stopped dispatching: not master", "master", v.Master, "epoch", v.Epoch)
	}
}

// reconfigure puts a queue built from the scheduler's settings now
// (node/liveconf) in place of the running one, while master: the requests
// queued in the old one go to the new one (node/dispatch: a queue replaced
// under a request), and the running ones give their slots back to the old
// one harmlessly; the new queue counts them by the boards' reports, as a
// new master does (invariant 3).
func (m *master) reconfigure() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.d == nil {
		return // not master: the next takeover builds the queue from the settings now
	}
	d, err := m.newDispatcher()
	if err != nil {
		m.log.Error("dispatch: the new scheduler settings do not build a queue; the old one runs on", "err", err)
		return
	}
	old := m.d
	m.d = d
	m.update()
	m.front.SetDispatcher(d)
	old.Close()
	m.log.Info("dispatch: queue rebuilt with the new scheduler settings")
}

// update feeds the dispatcher the boards' own reports (invariant 3).
func (m *master) update() {
	m.d.Update(m.boards())
}

// QueueStats is the master's queue, while this board runs it
// (report.Queuer): depths and started counts per class.
func (m *master) QueueStats() (map[string]int, map[string]uint64, bool) {
	m.mu.Lock()
	d := m.d
	m.mu.Unlock()
	if d == nil {
		return nil, nil, false
	}
	return d.Depths(), d.Started(), true
}
