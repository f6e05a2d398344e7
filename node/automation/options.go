// Package automation runs the MQTT bridge and the [[rule]] engine while this board is master.
package automation

import (
	"crypto/tls"
	"log/slog"
	"net/http"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/mqtt"
	"github.com/ews-firmware/ews/node/rules"
	"github.com/ews-firmware/ews/state"
	"github.com/jonboulle/clockwork"
)

// Config is what the bridge and the engine are built from: node maps
// [mqtt] and [[rule]] onto it and reads the secrets they need.
type Config struct {
	On    bool          // [mqtt] or [[rule]] are configured
	Token string        // the token the automation's commands present (auth = "token")
	MQTT  *mqtt.Options // nil without [mqtt]; Broker, TLSFiles, credentials, topics set
	TLS   *mqtt.TLSFiles
	Rules []rules.Rule
	// KeySecret keys the rules' Idempotency-Keys (rules.Options); Clock
	// is the board's wall clock.
	KeySecret []byte
	Clock     clockwork.Clock
	// Cite puts the file, line and key of the config in front of err.
	Cite func(key string, err error) error
}

// Options are what the automation needs from the board: narrow hooks,
// never the board itself.
type Options struct {
	Config Config
	Logger *slog.Logger
	// Door is the board's whole HTTP surface, which the commands enter.
	Door http.Handler
	// Devices and Boards are what the bridge publishes and the engine
	// watches.
	Devices func() []hal.Snapshot
	Boards  func() []state.Board
	// TLS is this board's TLS client config (nil with TLS off): an
	// mqtts:// broker without mqtt.ca_file is checked against its CA.
	TLS *tls.Config
}
