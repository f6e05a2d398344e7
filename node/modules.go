package node

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/node/access"
	"github.com/ews-firmware/ews/node/bootconf"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/guard"
	"github.com/ews-firmware/ews/node/history"
	"github.com/ews-firmware/ews/node/mdns"
	"github.com/ews-firmware/ews/node/pin"
	"github.com/ews-firmware/ews/node/restore"
	"github.com/ews-firmware/ews/node/rollout"
	"github.com/ews-firmware/ews/node/rotate"
	"github.com/ews-firmware/ews/node/users"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/state/row"
	"github.com/ews-firmware/ews/webui"
)

// The feature modules under node/ (docs/DESIGN.md, "Who owns what"), each
// built here from the boot config and narrow hooks of the board: no
// module is handed the Node.

// adminAudited is the gate of an admin's change: credentials, admin only,
// the act audited.
func (n *Node) adminAudited(h http.Handler) http.Handler {
	return n.audited(n.acc.auth.Require(adminOnly(h)))
}

// rotation is the roller Run starts beside the log; nil alone,
// insecure, or without a cluster key.
type rotation struct{ roller *rotate.Roller }

// openRotation builds the rotation's module (node/rotate) once the marker
// and the credentials exist; its roller installs the secrets the board
// starts on: those of marks, board credential, sessions.
func (n *Node) openRotation() {
	b, a := n.boot, &n.acc
	o := rotate.ModuleOptions{
		Roller:    rotate.Options{Self: b.State.Name, Saved: b.Rotated, Path: b.SecretsPath, Verify: n.sec.Verify, Log: n.log},
		Store:     b.StoreKey,
		BoardCred: b.BoardCred,
		Install: func(primary rotate.Secrets, also []rotate.Secrets) string {
			sign, err := dispatch.DeriveKey(primary.Key)
			if err != nil {
				n.log.Error("rotate: mark key", "err", err)
				return ""
			}
			var accept [][]byte
			creds := []string{bootconf.BoardCredential(b.State, primary.Key, b.Auth)}
			sessions := [][]byte{primary.Session}
			for _, s := range also {
				if k, err := dispatch.DeriveKey(s.Key); err == nil {
					accept = append(accept, k)
				}
				creds = append(creds, bootconf.BoardCredential(b.State, s.Key, b.Auth))
				sessions = append(sessions, s.Session)
			}
			if a.marker != nil {
				if err := a.marker.SetKeys(sign, accept...); err != nil {
					n.log.Error("rotate: mark keys", "err", err)
				}
			}
			if creds[0] == "" {
				creds = nil // no board credential here (auth is not token)
			}
			a.auth.Rotate(creds, sessions)
			a.creds.Store(a.auth.Fingerprint(b.StoreKey))
			if len(creds) == 0 {
				return ""
			}
			return creds[0]
		},
		Boards: func() []rotate.Board {
			var out []rotate.Board
			for _, r := range n.clu.cluster.Boards() {
				if !a.boards.Revoked(r.Name) {
					out = append(out, rotate.Board{Name: r.Name, HTTP: r.HTTP, Down: r.Runstate == row.Down})
				}
			}
			return out
		},
		Client:   n.sec.Client,
		Admin:    n.adminAudited,
		Read:     func(h http.Handler) http.Handler { return a.auth.Require(adminOnly(h)) },
		Who:      func(r *http.Request) string { return who(r).Name },
		PeerName: peerName,
	}
	if a.durable.Clustered() {
		o.Roller.State = a.durable.State()
	}
	if kr := n.clu.cluster.Keyring(); kr != nil {
		o.Roller.Keyring = kr
	}
	if !n.sec.On() {
		o.Client = nil
	}
	a.rotate = rotate.NewModule(o)
	n.life.onClose(a.rotate.Close)
	if r := a.rotate.Roller(); r != nil {
		a.rotation = &rotation{roller: r}
	}
}

// openRollout builds the rolling upgrade's module (node/rollout): POST/GET
// /api/cluster/upgrade; this board upgrades itself last (stageFirmware).
func (n *Node) openRollout() {
	a := &n.acc
	n.clu.rollout = rollout.New(rollout.Options{
		Self: n.boot.State.Name, Exe: n.set.exe, Basic: n.boot.Auth.Mode == "basic", Verify: n.sec.Verify,
		Scheme: n.sec.Scheme(), TLS: n.sec.Client, Logger: n.log,
		View: func() rollout.View {
			v := n.clu.view.Now()
			rv := rollout.View{Master: v.Master, Self: n.boot.State.Name}
			for _, b := range v.Nodes {
				rv.Nodes = append(rv.Nodes, rollout.Board{Name: b.Name, Rank: b.Rank, HTTP: b.HTTP, Runstate: b.Runstate.String()})
			}
			return rv
		},
		Busy: func() bool { return n.Exit() != ExitStop },
		Stage: func(f io.Reader, sum string) error {
			_, err := n.dev.upload.Stage(f, sum)
			return err
		},
		Admin: n.adminAudited,
		Read:  a.auth.Require,
	})
	n.life.onClose(n.clu.rollout.Close)
}

// openOutputs builds the remembered outputs' module (node/restore) once
// the devices and the mirror exist: Run holds actions until it restored
// them, and it keeps this board's own under state_dir.
func (n *Node) openOutputs() *restore.Module {
	st := n.boot.State
	o := restore.ModuleOptions{Self: st.Name, Devices: n.dev.devs, SeedPath: n.boot.SeedPath(), StateDir: n.boot.StateDirPath(),
		Settle: st.TMax + 2*st.Heartbeat, Wait: max(5*time.Second, 2*st.TMax+time.Second),
		OnRestore: func(s hal.Snapshot, from string) {
			n.web.hub.Publish("restored", map[string]any{"device": s.Name, "state": s.State, "value": s.Value, "from": from})
		},
		Logger: n.log,
	}
	if n.dev.mirror != nil { // (a nil *Mirror in the interface would be a mirror)
		o.Mirror = n.dev.mirror
		o.Peers = func() []string { // the other boards the table shows alive with an HTTP address
			var out []string
			for _, b := range n.clu.cluster.Boards() {
				if b.Name != st.Name && b.HTTP != "" && b.Runstate != row.Down {
					out = append(out, b.Name)
				}
			}
			return out
		}
		o.Master = func() string {
			name, _, _ := n.clu.cluster.Master()
			return name
		}
	}
	return restore.NewModule(o)
}

// openHistory builds the device history's module (node/history; the lite
// build's records nothing). The history goes to a file under state_dir
// when the config file names one (created if missing), or, naming none, on
// real hardware when the default /var/lib/ews exists (the package creates
// it). Otherwise (a simulated board, a dev machine, tests) it is kept in
// memory: `ews demo` and tests never write /var/lib/ews.
func (n *Node) openHistory() *history.Module {
	o := n.boot.History
	o.Registerer, o.Logger, o.Now = n.reg, n.log, n.boot.Clock.Now
	if dir := n.boot.StateDirPath(); dir != "" {
		o.Dir = filepath.Join(dir, "history")
	}
	var read func(http.Handler) http.Handler
	if n.boot.ReadAuth {
		read = n.acc.auth.Require
	}
	h := history.New(history.ModuleOptions{Options: o, Devices: n.dev.devs, Read: read,
		RetryAfter: n.boot.State.TMax + n.boot.State.Heartbeat,
		Lookup: func(name string) (hal.Snapshot, bool) { // the freshest state this board knows of a device
			for _, s := range n.deviceList() {
				if s.Name == name {
					return s, true
				}
			}
			return hal.Snapshot{}, false
		}})
	n.life.onClose(func() {
		if err := h.Close(); err != nil {
			n.log.Warn("history: close", "err", err)
		}
	})
	return h
}

// announcer announces this board on the LAN (node/mdns), its role
// following the cluster's master; nil with [node] mdns = false or when it
// cannot (logged).
func (n *Node) announcer(addr net.Addr) *mdns.Announcer {
	if !n.boot.MDNS {
		return nil
	}
	st, c := n.boot.State, n.clu.cluster
	o := mdns.AnnounceOptions{Name: st.Name, TLS: n.sec.On(), Addr: addr, Log: n.log,
		Role: func(set func(string)) func() {
			role := func(v state.View) string {
				if v.Master == st.Name {
					return "master"
				}
				return "follower"
			}
			set(role(c.Snapshot()))
			return c.OnChange(func(v state.View) { set(role(v)) })
		}}
	for _, p := range st.Peers {
		o.Peers = append(o.Peers, p.Name)
	}
	return mdns.Announce(o)
}

// actorDoor is the board's front door as rules and MQTT enter it
// (access.Door): a rule acts as admin, an MQTT command as [mqtt] user.
func (n *Node) actorDoor() http.Handler {
	return access.Door(access.DoorOptions{
		Handler:   func() http.Handler { return n.web.handler },
		BoardCred: func() string { return n.acc.rotate.BoardCred() }, BoardCredPrefix: bootconf.BoardCredPrefix,
		MQTTUser: func() string { return n.live.Load().MQTTUser }, // [mqtt] user as the store has it now
		User:     func(name string) *users.Principal { return n.acc.acct.Store.User(name) },
		Logger:   n.log,
	})
}

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
