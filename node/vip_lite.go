//go:build lite

package node

import (
	"context"
	"log/slog"

	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/vip"
)

// vipManager is left out of the lite build (docs/NOTES.md "The lite
// build"): a lite board never holds cluster.vip, which leftOut refuses.
type vipManager struct{}

func openVIP(vip.Config, *promx.Registry, *slog.Logger) (*vipManager, error) { return nil, nil }

func (*vipManager) Run(context.Context) error { return nil }
func (*vipManager) Close()                    {}

// vipFollower has nothing to follow without a virtual IP.
type vipFollower struct {
	m  *vipManager
	up int
}

func (*vipFollower) follow(state.View, bool) {}
