package bootconf

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/sched"
)

// SectionDefaults is, per cluster-wide section of the configuration
// store, what is in effect while the store holds none of it, as TOML a
// person can start from: the Settings page shows it in the section's empty
// box (GET /api/config/drivers, "defaults"). Written from the defaults
// the boards run with, so it cannot drift from them (configdefaults_test.go
// parses it back).
func SectionDefaults() map[string]string {
	c := config.DefaultConfig()
	q := strconv.Quote
	var s strings.Builder
	fmt.Fprintf(&s, "[sched]\npolicy = %s\nmode = %s\nqueue = %d\nqueue_timeout = %s\nqueue_target = %s\nheadroom = %s\n",
		q(c.Sched.Policy), q(c.Sched.Mode), c.Sched.Queue, q(c.Sched.QueueTimeout.String()), q(c.Sched.QueueTarget.String()), q(c.Sched.Headroom))
	for _, cl := range sched.ClassesFor(c.Sched.Policy) {
		m := make([]string, len(cl.Match))
		for i, p := range cl.Match {
			m[i] = q(p)
		}
		fmt.Fprintf(&s, "[[sched.class]]\nname = %s\nmatch = [%s]\n", q(cl.Name), strings.Join(m, ", "))
	}
	h := c.History
	return map[string]string{
		"rule":  "# no automations: a [[rule]] has when = \"DEVICE EVENT\" or at = \"HH:MM\", and then = \"DEVICE ACTION\"\n",
		"sched": s.String(),
		"mqtt":  "# no MQTT bridge while [mqtt] names no broker, e.g.\n# [mqtt]\n# broker = \"tcp://192.168.1.2:1883\"\n# discovery = true\n",
		"history": fmt.Sprintf("[history]\nflush = %s\nfull = %s\nkeep = %s\nresolution = %s\nmax_mb = %d\n",
			q(h.Flush.String()), q(h.Full.String()), q(h.Keep.String()), q(h.Resolution.String()), h.MaxMB),
	}
}
