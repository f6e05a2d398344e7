package config

import "time"

// DefaultConfig returns the values used for every key a file leaves out.
// [node], [cluster] and [sched] hold the defaults of the packages that own
// them (state.DefaultConfig, sched.DefaultConfig), written out here so the
// config needs neither; node's mapping test holds that they agree.
func DefaultConfig() Config {
	return Config{
		Node: Node{Name: "ews1", HTTP: ":8080", Gossip: ":7946", Capacity: 4, Weight: 1, StateDir: DefaultStateDir, SecretsDir: DefaultSecretsDir},
		Cluster: Cluster{
			TMax:       D(time.Second),
			TThreshold: D(500 * time.Millisecond),
			Heartbeat:  D(100 * time.Millisecond),
		},
		Sched: Sched{
			Policy:       "priority-lc",
			Mode:         "proxy",             // every request passes through the master
			Assign:       D(30 * time.Second), // redirect mode: redirect once, then 30 s straight to the board
			Queue:        1024,
			QueueTimeout: D(5 * time.Second),
			QueueTarget:  D(100 * time.Millisecond),
			Headroom:     "off",
			Stale:        "placed", // the load-aware policies see what the master placed since a board's report
			// Classes: none; the scheduler's for the policy (sched.ClassesFor)
		},
		HTTP: HTTP{
			Auth:            "token",
			TokenFile:       "/etc/ews/token",
			MaxBody:         1 << 20,             // 1 MiB
			ShutdownTimeout: D(10 * time.Second), // in-flight requests get this long
			HTTPS:           ":8443",
			HTTPRedirect:    true,
		},
		History: historyDefaults(),
		CGI: CGI{
			Dir:       "/var/lib/ews/cgi-bin",
			Timeout:   D(10 * time.Second),
			MaxOutput: 1 << 20,
			// node/cgi's defaults (cgi.Default*)
			CPUSeconds:   10,
			MaxMemory:    256 << 20,
			MaxProcesses: 32,
		},
	}
}
