package config

import (
	"fmt"
	"strings"
)

func (c *Config) validateDevices(bad func(string, string, ...any)) {
	names := map[string]int{}
	pins := map[string]string{} // node/pin -> device
	for i, d := range c.Devices {
		key := fmt.Sprintf("device[%d]", i)
		if !nameRe.MatchString(d.Name) {
			bad(key+".name", "%q is not a device name (letters, digits, - _ .)", d.Name)
		}
		if j, dup := names[d.Name]; dup {
			bad(key+".name", "duplicate device name %q (first defined on line %d)", d.Name, c.Lines[fmt.Sprintf("device[%d].name", j)])
		} else {
			names[d.Name] = i
		}
		if !contains(Drivers, d.Driver) {
			bad(key+".driver", "device %q: unknown driver %q; want one of %s", d.Name, d.Driver, strings.Join(Drivers, " "))
		}
		if d.Node != "any" && d.Node != c.Node.Name && !c.Standalone() && c.Rank(d.Node) < 0 {
			bad(key+".node", "device %q: board %q is not in cluster.peers", d.Name, d.Node)
		}
		if d.Pin != "" {
			k := d.Node + "/" + d.Pin
			if other, used := pins[k]; used {
				bad(key+".pin", "device %q: pin %s on %s is already used by %q", d.Name, d.Pin, d.Node, other)
			}
			pins[k] = d.Name
		}
		for _, v := range []struct{ k, val string }{{"initial", d.Initial}, {"on_stop", d.OnStop}} {
			if v.val != "" && v.val != "on" && v.val != "off" && !(v.k == "on_stop" && v.val == "keep") {
				bad(key+"."+v.k, "device %q: %q: want on or off", d.Name, v.val)
			}
		}
		if d.Min != nil && d.Max != nil && *d.Min > *d.Max {
			bad(key+".min", "device %q: min %v above max %v", d.Name, *d.Min, *d.Max)
		}
	}
	for i, d := range c.Devices {
		for _, other := range d.Interlock {
			if _, ok := names[other]; !ok {
				bad(fmt.Sprintf("device[%d].interlock", i), "device %q: interlock names unknown device %q", d.Name, other)
			}
		}
	}
}
