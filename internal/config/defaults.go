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
		Sched: schedDefaults(), // the scheduler owns these: sched.DefaultConfig
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
