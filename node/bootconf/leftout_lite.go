//go:build lite

package bootconf

import "github.com/ews-firmware/ews/internal/config"

// leftOut is what of c the lite build cannot honour (docs/NOTES.md "The
// lite build"), each by its key: a board asked for a feature it does not
// have refuses to start rather than run without it, and `ews config check`
// says so before the card is written. [node] mdns is not refused (it is on
// by default, and `ews config init` writes it): the board logs that it is
// not announced (announce_lite.go).
func leftOut(c *config.Config) config.Errors {
	var errs config.Errors
	no := func(key, what string) {
		errs = append(errs, c.Errorf(key, "%s is not in the lite build: remove it, or run the full build on this board", what))
	}
	if c.MQTT != nil {
		no("mqtt", "[mqtt] (the MQTT bridge)")
	}
	if len(c.Rules) > 0 {
		no("rule[0]", "[[rule]] (automations)")
	}
	if c.Cluster.VIP != "" {
		no("cluster.vip", "the virtual IP")
	}
	if len(c.Cluster.NTP) > 0 {
		no("cluster.ntp", "the NTP client (the master's time source)")
	}
	if c.Lines["history"] > 0 {
		no("history", "[history] (device history)")
	}
	return errs
}
