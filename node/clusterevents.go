package node

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ews-firmware/ews/state"
)

// viewKey is what makes a cluster table worth sending to the browsers:
// master, epoch, every row's state, HTTP address, linknum and load in
// steps of 5 %, the queues and completions, and peer-list mismatches.
// The table's version and ages move every heartbeat and are left out.
func viewKey(v any) string {
	t, ok := v.(state.View)
	if !ok {
		return fmt.Sprint(v)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s %v|", t.Epoch, t.Master, t.PeersMismatch)
	step := func(x float64) int { return int(x * 20) }
	for _, n := range t.Nodes {
		fmt.Fprintf(&b, "%s %s %s %d %d %d %d %d %d %d|", n.Name, n.HTTP, n.Runstate, n.Linknum, n.Capacity, n.Weight,
			step(n.Load.CPU), step(n.Load.Mem), step(n.Load.Net), step(n.Load.Disk))
	}
	for _, k := range slices.Sorted(maps.Keys(t.Queue)) {
		fmt.Fprintf(&b, "q%s=%d ", k, t.Queue[k])
	}
	for _, k := range slices.Sorted(maps.Keys(t.Completed)) {
		fmt.Fprintf(&b, "c%s=%d ", k, t.Completed[k])
	}
	return b.String()
}
