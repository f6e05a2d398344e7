// Package liveconf is the configuration store on one board: opened on the durable log, seeded, each version applied live, GET /api/config/status.
package liveconf

import (
	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/node/bootconf"
	"github.com/ews-firmware/ews/sched"
)

// Config is the cluster-wide part of the config this board runs now
// (docs/NOTES.md "Configuration store"): stored whole in Options.Live when
// a version of the store is applied, never changed once stored, so the
// request path reads it with one atomic load.
type Config struct {
	Version  uint64 // the store's version; 0 while the board runs what it started with
	Text     []byte // the sections as TOML
	HAL      hal.Config
	Sched    sched.Config
	Pins     map[string]string // device -> the board it is wired to ("any": anywhere)
	MQTTUser string            // [mqtt] user: the ews user MQTT commands act as
}

// Of is what b runs, as the store's version.
func Of(b *bootconf.Boot, version uint64) *Config {
	l := &Config{Version: version, Text: b.StoreText, HAL: b.HAL, Sched: b.Sched, Pins: map[string]string{}}
	for _, d := range b.HAL.Devices {
		l.Pins[d.Name] = d.Node
	}
	if m := b.Auto.MQTT; m != nil {
		l.MQTTUser = m.User
	}
	return l
}
