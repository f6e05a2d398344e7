package config

import (
	"time"

	"github.com/ews-firmware/ews/state"
)

// DefaultConfig returns the values used for every key a file leaves out.
// [node] and [cluster] take theirs from the package that owns them.
func DefaultConfig() Config {
	st := state.DefaultConfig()
	return Config{
		Node: Node{Name: st.Name, HTTP: st.HTTP, Gossip: st.Gossip, Capacity: st.Capacity, Weight: st.Weight, StateDir: DefaultStateDir},
		Cluster: Cluster{
			TMax:       D(st.TMax),
			TThreshold: D(st.TThreshold),
			Heartbeat:  D(st.Heartbeat),
		},
		Sched: schedDefaults(), // the scheduler owns these: sched.DefaultConfig
		HTTP: HTTP{
			Auth:            "token",
			TokenFile:       "/etc/ews/token",
			MaxBody:         1 << 20,             // 1 MiB
			ShutdownTimeout: D(10 * time.Second), // in-flight requests get this long
			HTTPS:           ":8443",
			HTTPRedirect:    true,
		},
		History: historyDefaults(), // issue 28
		CGI: CGI{
			Dir:       "/var/lib/ews/cgi-bin",
			Timeout:   D(10 * time.Second),
			MaxOutput: 1 << 20,
		},
	}
}
