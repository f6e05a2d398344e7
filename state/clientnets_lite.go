//go:build lite

package state

import (
	"log/slog"
	"net/netip"
	"time"

	"github.com/ews-firmware/ews/state/nearnet"
)

// The lite build leaves out 003's scheme 3 (clientnets.go): it measures
// no client, publishes nothing, and its learned proximity rules rank from
// the door.

type nearMeta struct{}

func (nearMeta) tail() []byte                          { return nil }
func (nearMeta) fromMeta(*slog.Logger, string, []byte) {}

// ClientMeter is nil: nothing is measured.
func (c *Cluster) ClientMeter() *nearnet.Meter { return nil }

// SetClientNets does nothing.
func (c *Cluster) SetClientNets([]nearnet.Net) {}

// ClientRTT is never known.
func (c *Cluster) ClientRTT(string, netip.Addr) (time.Duration, bool) { return 0, false }

func (c *Cluster) markClientNets([]Board) {}
