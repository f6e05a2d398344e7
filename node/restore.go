package node

// Outputs the cluster remembers (issue 25 part 3): the wiring of
// node/restore. Hooks elsewhere, each marked "issue 25": n.holdOutputs()
// and n.restoreOutputs(ctx) in Run (node.go), the "outputs" snapshot of the
// local stream (devices.go). A backup's outputs for this board (ews cluster
// restore) are read once from beside the boot config.

import (
	"context"
	"os"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/restore"
	"github.com/ews-firmware/ews/state"
)

// holdOutputs keeps device actions waiting from the start of Run until
// restoreOutputs has brought the outputs back: the master may send this
// board work as soon as it reports, before it says it is ready.
func (n *Node) holdOutputs() {
	if n.mirror != nil || n.hasSeed() {
		n.devs.Hold()
	}
}

// hasSeed reports whether a backup left outputs to restore beside the config.
func (n *Node) hasSeed() bool {
	p := n.seedPath()
	if p == "" {
		return false
	}
	_, err := os.Stat(p)
	return err == nil
}

// restoreOutputs writes back each output with restore = "last" to the
// state the other boards remember (the newest among those that answer),
// then releases the actions holdOutputs held. Standalone, it does nothing.
func (n *Node) restoreOutputs(ctx context.Context) {
	all, err := restore.LoadSeed(n.seedPath(), seedMarkDir)
	if err != nil {
		n.log.Warn("restore: backup outputs not read", "err", err)
	}
	var seed []hal.Snapshot // only this board's: a file for another board is left alone
	for _, s := range all {
		if s.Node == n.cfg.Node.Name {
			seed = append(seed, s)
		}
	}
	if n.mirror == nil && seed == nil {
		n.devs.Release()
		return
	}
	c := n.cfg.Cluster
	o := restore.Options{
		Self:    n.cfg.Node.Name,
		Devices: n.devs,
		Peers:   func() []string { return nil },
		Master:  func() string { return n.cfg.Node.Name }, // standalone: nobody to wait for
		Offers:  func() map[string][]hal.Snapshot { return nil },
		Seed:    seed,
		Settle:  c.TMax.Duration + 2*c.Heartbeat.Duration,
		Wait:    max(5*time.Second, 2*c.TMax.Duration+time.Second),
		OnRestore: func(s hal.Snapshot, from string) {
			n.hub.Publish("restored", map[string]any{"device": s.Name, "state": s.State, "value": s.Value, "from": from})
		},
		Logger: n.log,
	}
	if n.mirror != nil {
		o.Peers, o.Offers, o.Poke = n.livePeers, n.mirror.Offers, n.mirror.Poke
		o.Master = func() string {
			name, _, _ := n.cluster.Master()
			return name
		}
	}
	restore.Run(ctx, o)
	if seed != nil {
		if err := restore.UseSeed(n.seedPath(), seedMarkDir); err != nil {
			n.log.Warn("restore: backup outputs left in place", "err", err)
		}
	}
}

// seedMarkDir is where a used backup seed is marked when the board may not
// rename it beside its config: the packaged unit's writable state
// directory (node.state_dir once issue 28 lands).
const seedMarkDir = "/var/lib/ews"

// livePeers are the other boards the table shows alive with an HTTP
// address: the ones a restarting board waits to hear from.
func (n *Node) livePeers() []string {
	var out []string
	for _, b := range n.cluster.Boards() {
		if b.Name != n.cfg.Node.Name && b.HTTP != "" && b.Runstate != state.Down {
			out = append(out, b.Name)
		}
	}
	return out
}

// rememberedOutputs is what this board offers on its local stream: the
// other boards' outputs at their last command (nil standalone).
func (n *Node) rememberedOutputs() any {
	if n.mirror == nil {
		return []hal.Snapshot{}
	}
	return n.mirror.Remembered()
}
