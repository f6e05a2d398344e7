package node

import (
	"net/http"
	"sync/atomic"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/cgi"
	"github.com/ews-firmware/ews/node/devapi"
	"github.com/ews-firmware/ews/node/devsync"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/events"
	"github.com/ews-firmware/ews/node/health"
	"github.com/ews-firmware/ews/node/supervise"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/state/procload"
	"github.com/ews-firmware/ews/vip"
)

// system is the board's components as typed fields, each set once by
// build before anything runs and read where needed (the shape of
// tailscale's tsd.System). What depends on what reads top to bottom in
// build; what runs, and in which order, in Node.Run.
type system struct {
	reg     *promx.Registry
	metrics *metrics
	sec     security // TLS material and session secret from the bundle

	local   *local          // what the cluster hears of this board
	health  *health.Checker // [[health.process]] and [[health.check]]
	load    loadSource      // /proc (procload), or what [sim] implies on a simulated board
	sim     *simLoad        // nil on real hardware
	cluster *state.Cluster  // membership, table, election
	vip     *vip.Manager    // the cluster's virtual IP while master; nil without cluster.vip

	devs     *hal.Devices    // this board's devices
	auth     *auth.Auth      // credentials for control
	api      *devapi.API     // /api/devices
	cgi      *cgi.Handler    // /cgi-bin
	hub      *events.Hub     // /events: cluster table and every device
	localHub *events.Hub     // /events?scope=local: this board's devices, for the mirrors
	logHub   *events.Hub     // /events?scope=log
	mirror   *devsync.Mirror // other boards' devices, live; nil standalone

	front   *dispatch.Front       // queue, dispatch and forwarding of work
	master  *master               // the dispatcher while this board is master
	auto    *automation           // MQTT and [[rule]]s while master; nil without them
	helpers *supervise.Supervisor // [[supervise]] programs

	rt       probes        // boards' response times, probed by the master
	refusals refusals      // boards that refused forwarded credentials lately
	creds    atomic.Uint64 // fingerprint of this board's credentials, for its reports
	rollout  rolloutState  // POST /api/cluster/upgrade
}

// build makes every component in the order they need each other and
// passes each what it needs. It opens no listener and starts no goroutine;
// what it opens (devices, hubs) is closed by n.life.
func (n *Node) build() error {
	cfg, log := n.cfg, n.log
	s := &system{reg: promx.NewRegistry()}
	n.system = s
	s.metrics = newMetrics(s.reg)

	// what this board tells the cluster, and the cluster
	s.local = &local{n: n}
	s.health = health.New(healthConfig(cfg), log)
	s.load = procload.New()
	if cfg.Sim != nil {
		s.sim = newSimLoad(*cfg.Sim, s.local.InFlight, s.local.Completed)
		s.load = s.sim
	}
	if err := n.openSecurity(); err != nil {
		return err
	}
	sc, err := cfg.State()
	if err != nil {
		return err
	}
	if s.cluster, err = state.New(sc, log, s.reg, s.local); err != nil {
		return err
	}
	if err := n.openVIP(); err != nil {
		return err
	}

	// devices, credentials, event hubs and what serves them
	if err := n.openDevices(); err != nil {
		return err
	}
	n.openLogs()
	if n.set.exe != "" {
		s.rollout.load(n.set.exe + ".rollout.json")
	}
	n.life.onClose(s.rollout.stop)
	s.creds.Store(s.auth.Fingerprint(sc.Key))
	if cfg.HTTP.Auth == "none" {
		log.Warn("http auth is none: anyone who reaches this board can control its devices")
	}

	// the front door: work enters the master's queue
	front, err := n.newFront(n.work())
	if err != nil {
		return err
	}
	s.front = front
	n.life.onClose(front.Close)
	s.master = &master{n: n, front: front, vip: vipFollower{m: s.vip, up: -1}}
	mux := http.NewServeMux()
	n.routes(mux)
	n.handler = n.wrap(mux)

	// what runs while this board is master, and the helpers
	if s.auto, err = newAutomation(cfg, log, n.handler, n.deviceList, s.cluster); err != nil {
		return err
	}
	s.helpers = supervise.New(supervised(cfg), log)
	return nil
}
