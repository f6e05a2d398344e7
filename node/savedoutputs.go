package node

// Outputs the cluster remembers (docs/DESIGN.md "Board services"): the wiring of
// node/restore. This board's own outputs are saved under [node] state_dir too. Hooks elsewhere: n.holdOutputs()
// and n.restoreOutputs(ctx) in Run (node.go), the "outputs" snapshot of the
// local stream (devices.go). A backup's outputs for this board (ews cluster
// restore) are read once from beside the boot config.

import (
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/restore"
	"github.com/ews-firmware/ews/state"
)

// holdOutputs keeps device actions waiting from the start of Run until
// restoreOutputs has brought the outputs back: the master may send this
// board work as soon as it reports, before it says it is ready.
func (n *Node) holdOutputs() {
	if n.dev.mirror != nil || n.hasSeed() {
		n.dev.devs.Hold()
	}
}

// hasSeed reports whether a backup left outputs to restore beside the
// config, or this board saved its own.
func (n *Node) hasSeed() bool {
	if p := n.localOutputsPath(); p != "" {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	p := n.boot.seedPath()
	if p == "" {
		return false
	}
	_, err := os.Stat(p)
	return err == nil
}

// restoreOutputs writes back each output with restore = "last" to the
// newest state among what the other boards remember, a backup left beside
// the config and what this board saved itself, then releases the actions
// holdOutputs held, and keeps saving this board's outputs from then on.
func (n *Node) restoreOutputs(ctx context.Context) {
	all, err := restore.LoadSeed(n.boot.seedPath(), n.stateDir())
	if err != nil {
		n.log.Warn("restore: backup outputs not read", "err", err)
	}
	seed := n.own(all) // only this board's: a file for another board is left alone
	localPath := n.localOutputsPath()
	saved, err := restore.LoadLocal(localPath)
	if err != nil {
		n.log.Warn("restore: saved outputs not read", "err", err)
	}
	restored := n.runRestore(ctx, seed, n.own(saved))
	if seed != nil {
		if err := restore.UseSeed(n.boot.seedPath(), n.stateDir()); err != nil {
			n.log.Warn("restore: backup outputs left in place", "err", err)
		}
	}
	if localPath != "" {
		n.life.start(ctx, "outputs-keep", runFunc(func(ctx context.Context) error {
			restore.Keep(ctx, localPath, n.dev.devs, time.Second, restored, n.log)
			return nil
		}))
	}
}

// runRestore runs node/restore with the cluster's memory (when in a
// cluster), seed and local; it says whether it restored an output.
func (n *Node) runRestore(ctx context.Context, seed, local []hal.Snapshot) bool {
	if n.dev.mirror == nil && seed == nil && local == nil {
		n.dev.devs.Release()
		return false
	}
	o := restore.Options{
		Self:    n.boot.state.Name,
		Devices: n.dev.devs,
		Peers:   func() []string { return nil },
		Master:  func() string { return n.boot.state.Name }, // standalone: nobody to wait for
		Offers:  func() map[string][]hal.Snapshot { return nil },
		Seed:    seed,
		Local:   local,
		Settle:  n.boot.state.TMax + 2*n.boot.state.Heartbeat,
		Wait:    max(5*time.Second, 2*n.boot.state.TMax+time.Second),
		OnRestore: func(s hal.Snapshot, from string) {
			n.web.hub.Publish("restored", map[string]any{"device": s.Name, "state": s.State, "value": s.Value, "from": from})
		},
		Logger: n.log,
	}
	if n.dev.mirror != nil {
		o.Peers, o.Offers, o.Poke = n.livePeers, n.dev.mirror.Offers, n.dev.mirror.Poke
		o.Master = func() string {
			name, _, _ := n.clu.cluster.Master()
			return name
		}
	}
	return len(restore.Run(ctx, o).Restored) > 0
}

// localOutputsPath is the file of this board's saved outputs; "" when off.
// Under a state_dir the config names, the directory is made if missing.
func (n *Node) localOutputsPath() string {
	dir := n.stateDir()
	if dir == "" {
		return ""
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		n.log.Warn("restore: state_dir not usable: outputs are not saved", "dir", dir, "err", err)
		return ""
	}
	return filepath.Join(dir, "outputs.json")
}

// own keeps the snapshots of this board's devices.
func (n *Node) own(list []hal.Snapshot) []hal.Snapshot {
	var out []hal.Snapshot
	for _, s := range list {
		if s.Node == n.boot.state.Name {
			out = append(out, s)
		}
	}
	return out
}

// livePeers are the other boards the table shows alive with an HTTP
// address: the ones a restarting board waits to hear from.
func (n *Node) livePeers() []string {
	var out []string
	for _, b := range n.clu.cluster.Boards() {
		if b.Name != n.boot.state.Name && b.HTTP != "" && b.Runstate != state.Down {
			out = append(out, b.Name)
		}
	}
	return out
}

// rememberedOutputs is what this board offers on its local stream: the
// other boards' outputs at their last command (nil standalone).
func (n *Node) rememberedOutputs() any {
	if n.dev.mirror == nil {
		return []hal.Snapshot{}
	}
	return n.dev.mirror.Remembered()
}
