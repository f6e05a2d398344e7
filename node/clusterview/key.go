package clusterview

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/ews-firmware/ews/state"
)

// Key is what makes a cluster table worth sending to the browsers at
// once: master, epoch, every row's state, HTTP address and linknum, the
// queues and completions, and peer-list mismatches. The version and ages
// move every heartbeat and the measured load jitters, so they travel with
// the next change or the periodic refresh (events.CoalesceOptions.Refresh).
func Key(v any) string {
	t, ok := v.(state.View)
	if !ok {
		return fmt.Sprint(v)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s %v|", t.Epoch, t.Master, t.PeersMismatch)
	for _, n := range t.Nodes {
		fmt.Fprintf(&b, "%s %s %s %d %d %d %v %v|", n.Name, n.HTTP, n.Runstate, n.Linknum, n.Capacity, n.Weight, n.AuthMismatch, n.Simulated)
	}
	for _, k := range slices.Sorted(maps.Keys(t.Queue)) {
		fmt.Fprintf(&b, "q%s=%d ", k, t.Queue[k])
	}
	for _, k := range slices.Sorted(maps.Keys(t.Completed)) {
		fmt.Fprintf(&b, "c%s=%d ", k, t.Completed[k])
	}
	return b.String()
}
