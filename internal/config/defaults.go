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
		Node: Node{Name: st.Name, HTTP: st.HTTP, Gossip: st.Gossip, Capacity: st.Capacity, Weight: st.Weight},
		Cluster: Cluster{
			TMax:       D(st.TMax),
			TThreshold: D(st.TThreshold),
			Heartbeat:  D(st.Heartbeat),
		},
		Sched: Sched{
			Policy:       "priority-lc",             // the paper's algorithm
			Mode:         "proxy",                   // every request passes through the master
			Queue:        1024,                      // per class
			QueueTimeout: D(5 * time.Second),        // queued longer: 503
			QueueTarget:  D(100 * time.Millisecond), // fail fast above this sojourn
			Classes:      DefaultClasses(),          // control first, browse after
		},
		HTTP: HTTP{
			Auth:            "token",
			TokenFile:       "/etc/ews/token",
			MaxBody:         1 << 20,             // 1 MiB
			ShutdownTimeout: D(10 * time.Second), // in-flight requests get this long
		},
		CGI: CGI{
			Dir:       "/var/lib/ews/cgi-bin",
			Timeout:   D(10 * time.Second),
			MaxOutput: 1 << 20,
		},
	}
}

// DefaultClasses are the classes used when the file declares none: device
// control and CGI first, everything else after.
func DefaultClasses() []Class {
	return []Class{
		{Name: "control", Match: []string{"* /api/devices/**", "* /cgi-bin/**"}, Weight: 1},
		{Name: "browse", Match: []string{"*"}, Weight: 1},
	}
}
