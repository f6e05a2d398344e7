package config

import "time"

// DefaultConfig returns the values used for every key a file leaves out.
func DefaultConfig() Config {
	return Config{
		Node: Node{
			Name:     "ews1",
			HTTP:     ":8080", // client requests, UI and API
			Gossip:   ":7946", // memberlist's usual port
			Capacity: 4,       // slots: requests run at once
			Weight:   1,       // equal boards
		},
		Cluster: Cluster{
			TMax:       D(time.Second),            // master silence before takeover
			TThreshold: D(500 * time.Millisecond), // board silence before down
			Heartbeat:  D(100 * time.Millisecond), // table and report period
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
