//go:build lite

// Package automation runs the MQTT bridge and the [[rule]] engine while this board is master.
package automation

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net/http"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/actuate"
	"github.com/ews-firmware/ews/node/mqtt"
	"github.com/ews-firmware/ews/node/rules"
	"github.com/ews-firmware/ews/state"
	"github.com/jonboulle/clockwork"
)

// The automation is left out of the lite build (docs/NOTES.md "The lite
// build"): no MQTT bridge and no [[rule]] engine, even while this board is
// master. node's leftOut refuses a config that asks for them, so New is
// never asked to build one. Config and Options are the full build's.

// Config is the full build's (automation.go).
type Config struct {
	On        bool
	Token     string
	MQTT      *mqtt.Options
	TLS       *mqtt.TLSFiles
	Rules     []rules.Rule
	KeySecret []byte
	Clock     clockwork.Clock
	Cite      func(key string, err error) error
}

// Options is the full build's (automation.go).
type Options struct {
	Config  Config
	Logger  *slog.Logger
	Door    http.Handler
	Devices func() []hal.Snapshot
	Boards  func() []state.Board
	TLS     *tls.Config
}

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
