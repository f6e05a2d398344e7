package bootconf

import (
	"reflect"

	"github.com/ews-firmware/ews/node/confstore"
)

// RestartNeeded lists what of a change from old to cur (documents of the
// configuration store) a board takes only at its next start
// (docs/NOTES.md "Configuration store"), compared as this board maps them
// (a key left out is its default): the front door's mode, assignments and
// sticky cookie, set when it is built; the history's files and rhythm,
// opened at start; and the policy or its limits when the integrated
// policy is on either side (each follower watches its own overload with
// them from its start). Everything else is applied live (liveconfig.go).
// A document this board cannot map counts as every section changed
// (confstore.Changed).
func (b *Boot) RestartNeeded(old, cur []byte) []string {
	x, errX := b.WithStore(old)
	y, errY := b.WithStore(cur)
	if errX != nil || errY != nil {
		return confstore.Changed(old, cur)
	}
	out := []string{}
	for _, k := range []struct {
		key  string
		a, b any
	}{
		{"sched.mode", x.Mode, y.Mode},
		{"sched.assign", x.Assign, y.Assign},
		{"sched.sticky", x.Sched.Sticky, y.Sched.Sticky},
		{"history", x.History, y.History},
	} {
		if !reflect.DeepEqual(k.a, k.b) {
			out = append(out, k.key)
		}
	}
	px, py := x.Sched.Policy, y.Sched.Policy
	if (px == "integrated" || py == "integrated") && px != py {
		out = append(out, "sched.policy")
	}
	if py == "integrated" && !reflect.DeepEqual(x.Sched.Integrated, y.Sched.Integrated) {
		out = append(out, "sched.integrated")
	}
	return out
}
