package node

import (
	"net/http"
	"time"

	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/guard"
	"github.com/ews-firmware/ews/node/history"
	"github.com/ews-firmware/ews/node/pin"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/webui"
)

// newFront builds the front door for work: on the master it queues by
// class and dispatches; elsewhere it passes requests to the master or runs
// the ones the master marked for this board. The work is what runs on the
// board a request is dispatched to: the device API, CGI, the users store
// and the pages, its acts audited where they run.
func (n *Node) newFront() (*dispatch.Front, error) {
	work := http.NewServeMux()
	n.dev.api.Register(work)
	n.dev.hist.Routes(work) // GET /api/devices/{name}/history
	work.Handle("/cgi-bin/", n.acc.auth.Require(n.dev.cgi))
	n.acc.acct.Store.Register(work, who) // /api/users (pinned to the master)
	for pattern, h := range n.set.routes {
		work.Handle(pattern, h)
	}
	work.Handle("/", guard.PageCost(webui.Handler(), n.boot.PageLatency, n.clu.sim.Slowdown)) // [sim] page_latency
	var peer func(*http.Request) (string, bool)
	if n.sec.On() {
		peer = peerName
	}
	return dispatch.NewFront(dispatch.Options{
		Cluster: frontCluster{elected: n.clu.cluster, open: func() bool { return n.web.front.Dispatcher() != nil }},
		Local:   n.audited(work),
		Auth:    guard.Gate{Auth: n.acc.auth, ReadAuth: n.boot.ReadAuth, Audit: n.acc.acct.Audit},
		Marker:  n.acc.marker,
		Pin: history.Pin(pin.New(n.boot.State.Name, n.boot.State.Peers, func() map[string]string { return n.live.Load().Pins }, n.clu.cluster.Master),
			pin.Running(n.clu.cluster.Boards)), // a dead board's history from the mirror
		Mode:          n.boot.Mode,
		StickyCookie:  n.boot.Sched.Sticky == sched.StickyCookie,
		RedirectHold:  n.boot.State.Heartbeat,
		AssignTTL:     assignTTL(n.boot.Assign),
		Capacity:      n.boot.State.Capacity,
		Serving:       func() bool { return n.clu.local.Runstate() == state.Running }, // what its report says: health, not stopping
		Overloaded:    n.clu.local.Overloaded(),
		MasterWait:    n.boot.State.TMax + n.boot.State.Heartbeat,
		ReplayMax:     min(n.boot.MaxBody, dispatch.DefaultReplayMax),
		MaxBody:       n.boot.MaxBody,
		Transport:     dispatch.NewTransport(dispatch.TransportOptions{ResponseHeaderTimeout: n.boot.CGI.Timeout + 5*time.Second, TLS: n.sec.Client}),
		Scheme:        n.sec.Scheme(),
		PeerName:      peer,
		OnAuthRefused: n.clu.view.Refused,
		Verified:      n.acc.auth.Verified,
		CredsDiffer:   n.clu.view.CredsDiffer,
		FromBoard:     n.acc.peers.From,
		SharedRead:    pin.ReadOnlyDevices(n.boot.HAL),
		Registerer:    n.reg,
		Logger:        n.log,
	})
}

// frontCluster is the cluster as the front door sees it. This board is
// master for the front door once the election made it master and
// master.follow, on that change, gave the front its dispatcher: a query of
// both, with no side effect. A request that arrives in between waits for
// the queue as for any new master (dispatch's viaPlacer holds it), and goes on
// the moment SetDispatcher opens it.
type frontCluster struct {
	elected interface { // the election (*state.Cluster)
		Self() string
		Epoch() uint64
		Master() (name, httpAddr string, ok bool)
		IsMaster() bool
	}
	open func() bool // the queue is open: the front has a dispatcher
}

func (c frontCluster) Self() string                             { return c.elected.Self() }
func (c frontCluster) Epoch() uint64                            { return c.elected.Epoch() }
func (c frontCluster) Master() (name, httpAddr string, ok bool) { return c.elected.Master() }
func (c frontCluster) IsMaster() bool                           { return c.elected.IsMaster() && c.open() }

// assignTTL maps sched.assign onto dispatch.Options.AssignTTL: 0 there is
// the default, here it turns assignments off.
func assignTTL(d time.Duration) time.Duration {
	if d <= 0 {
		return -1
	}
	return d
}

// peerName names the cluster board that sent r, from its verified client
// certificate.
func peerName(r *http.Request) (string, bool) { return clustertls.PeerName(r.TLS) }
