// Package liveconf is the configuration store on one board: opened on the durable log, seeded, each version applied live, GET /api/config/status.
package liveconf

import (
	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/sched"
)

// Config is the cluster-wide part of the config this board runs now
// (docs/NOTES.md "Configuration store"): stored whole in Options.Live when
// a version of the store is applied, never changed once stored, so the
// request path reads it with one atomic load. node/bootconf maps it
// (Boot.Live).
type Config struct {
	Version  uint64 // the store's version; 0 while the board runs what it started with
	Text     []byte // the sections as TOML
	HAL      hal.Config
	Sched    sched.Config
	Pins     map[string]string // device -> the board it is wired to ("any": anywhere)
	MQTTUser string            // [mqtt] user: the ews user MQTT commands act as
}
