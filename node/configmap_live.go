package node

import (
	"reflect"

	"github.com/ews-firmware/ews/node/confstore"
)

// restartNeeded lists what of a change from old to cur (documents of the
// configuration store) a board takes only at its next start
// (docs/NOTES.md "Configuration store"), compared as this board maps them
// (a key left out is its default): the front door's mode, assignments and
// sticky cookie, set when it is built; the history's files and rhythm,
// opened at start; and the policy or its limits when the integrated
// policy is on either side (each follower watches its own overload with
// them from its start). Everything else is applied live (liveconfig.go).
// A document this board cannot map counts as every section changed
// (confstore.Changed).
func (b *boot) restartNeeded(old, cur []byte) []string {
	x, errX := b.withStore(old)
	y, errY := b.withStore(cur)
	if errX != nil || errY != nil {
		return confstore.Changed(old, cur)
	}
	out := []string{}
	for _, k := range []struct {
		key  string
		a, b any
	}{
		{"sched.mode", x.mode, y.mode},
		{"sched.assign", x.assign, y.assign},
		{"sched.sticky", x.sched.Sticky, y.sched.Sticky},
		{"history", x.history, y.history},
	} {
		if !reflect.DeepEqual(k.a, k.b) {
			out = append(out, k.key)
		}
	}
	px, py := x.sched.Policy, y.sched.Policy
	if (px == "integrated" || py == "integrated") && px != py {
		out = append(out, "sched.policy")
	}
	if py == "integrated" && !reflect.DeepEqual(x.sched.Integrated, y.sched.Integrated) {
		out = append(out, "sched.integrated")
	}
	return out
}
