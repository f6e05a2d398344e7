package node

import (
	"io"
	"net"
	"net/http"
	"path/filepath"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/access"
	"github.com/ews-firmware/ews/node/bootconf"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/history"
	"github.com/ews-firmware/ews/node/mdns"
	"github.com/ews-firmware/ews/node/restore"
	"github.com/ews-firmware/ews/node/rollout"
	"github.com/ews-firmware/ews/node/rotate"
	"github.com/ews-firmware/ews/node/users"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/state/row"
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
