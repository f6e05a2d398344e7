package config

import "fmt"

// validateDevices checks what only the whole file knows (names, boards,
// pins per board). Each device's driver and keys are hal's to judge
// (hal.CheckSpecs, called by node's mapping of the config).
func (c *Config) validateDevices(bad func(string, string, ...any)) {
	names := map[string]int{}
	pins := map[string]string{} // node/pin -> device
	for i, d := range c.Devices {
		key := fmt.Sprintf("device[%d]", i)
		if !nameRe.MatchString(d.Name) {
			bad(key+".name", "%q is not a device name (letters, digits, - _ .)", d.Name)
		}
		c.once(bad, names, key+".name", "device name", d.Name, i, "device[%d].name")
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
	}
	for i, d := range c.Devices {
		for _, other := range d.Interlock {
			if _, ok := names[other]; !ok {
				bad(fmt.Sprintf("device[%d].interlock", i), "device %q: interlock names unknown device %q", d.Name, other)
			}
		}
	}
}
