//go:build lite

package node

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net/http"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/actuate"
	"github.com/ews-firmware/ews/state"
)

// automation is left out of the lite build (docs/NOTES.md "The lite
// build"): no MQTT bridge and no [[rule]] engine, even while this board is
// master. leftOut refuses a config that asks for them, so newAutomation is
// never asked to build one.
type automation struct{}

func newAutomation(*boot, *slog.Logger, http.Handler, func() []hal.Snapshot, *state.Cluster, *tls.Config) (*automation, error) {
	return nil, nil
}

func (*automation) onTurnBack(func(actuate.Command, int, error)) {}
func (*automation) start()                                       {}
func (*automation) stop()                                        {}
func (*automation) observe(hal.Snapshot)                         {}
func (*automation) poke()                                        {}
func (*automation) reconfigure(*boot) error                      { return nil }
func (*automation) Run(context.Context) error                    { return nil }
