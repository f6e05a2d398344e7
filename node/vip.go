//go:build !lite

package node

import (
	"log/slog"

	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/vip"
)

// vipManager holds the virtual IP; the lite build has a stub (vip_lite.go).
type vipManager = vip.Manager

// openVIP checks at start what holding cluster.vip needs (capabilities,
// interface): a board that cannot hold it says so and does not start.
// Nil without cluster.vip.
func openVIP(vc vip.Config, reg *promx.Registry, log *slog.Logger) (*vipManager, error) {
	if !vc.Enabled() {
		return nil, nil
	}
	m, err := vip.New(vc, vip.Options{Registerer: reg, Logger: log})
	if err != nil {
		return nil, err
	}
	log.Info("vip: held while this board is master", "vip", vc.Prefix.String(), "interface", m.Interface())
	return m, nil
}

// vipFollower turns table changes into the virtual IP's state: held while
// master, and announced again when boards come back (a healed partition's
// clients may have learnt the other master's MAC).
type vipFollower struct {
	m  *vipManager // nil: no cluster.vip
	up int         // boards up in the last view seen as master; -1 when not master
}

func (f *vipFollower) follow(v state.View, isMaster bool) {
	if f.m == nil {
		return
	}
	f.m.Set(isMaster)
	if !isMaster {
		f.up = -1
		return
	}
	up := 0
	for _, b := range v.Nodes {
		if b.Runstate != state.Down {
			up++
		}
	}
	if f.up >= 0 && up > f.up {
		f.m.Announce()
	}
	f.up = up
}
