//go:build lite

package automation

import (
	"context"
	"crypto/tls"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/actuate"
)

// The automation is left out of the lite build (docs/NOTES.md "The lite
// build"): no MQTT bridge and no [[rule]] engine, even while this board is
// master. node's leftOut refuses a config that asks for them, so New is
// never asked to build one.

// Automation runs nothing.
type Automation struct{}

// New is nil: nothing to run.
func New(Options) (*Automation, error) { return nil, nil }

func (*Automation) OnTurnBack(func(actuate.Command, int, error)) {}
func (*Automation) Start()                                       {}
func (*Automation) Stop()                                        {}
func (*Automation) Observe(hal.Snapshot)                         {}
func (*Automation) Poke()                                        {}
func (*Automation) Reconfigure(Config) error                     { return nil }
func (*Automation) Run(context.Context) error                    { return nil }
func (*Automation) Running() (bridge, engine bool, rules int)    { return false, false, 0 }
func (*Automation) BridgeTLS() *tls.Config                       { return nil }
