// Package config reads the boot config file into plain types, with each key's line, and checks what the file alone can break.
package config

import (
	"time"

	"github.com/ews-firmware/ews/internal/spec"
)

// Config is one board's boot config (ews.toml). Every key of docs/DESIGN.md has a
// field here; DefaultConfig fills the values a file may leave out.
type Config struct {
	tokenFromBundle bool // http.token came from cluster.bundle_file (fillTokenFromBundle)

	Node      Node        `toml:"node"`
	Cluster   Cluster     `toml:"cluster"`
	Sched     Sched       `toml:"sched"`
	HTTP      HTTP        `toml:"http"`
	CGI       CGI         `toml:"cgi"`
	Sim       *Sim        `toml:"sim"`    // set: simulated board (node.board "auto" or "sim"); nil: node.board decides
	Devices   []Device    `toml:"device"` // [[device]]
	Health    Health      `toml:"health"`
	Supervise []Supervise `toml:"supervise"` // [[supervise]]
	MQTT      *MQTT       `toml:"mqtt"`      // nil: no MQTT bridge
	Rules     []Rule      `toml:"rule"`      // [[rule]]: automations the master runs
	History   History     `toml:"history"`   // device history (history.go)

	// Path is the file the config was read from ("" for defaults).
	Path string `toml:"-"`
	// Lines maps a key path ("node.capacity", "device[1].name") to its line in
	// Path, so later checks (hal opening a pin, say) can point at the line.
	Lines map[string]int `toml:"-"`
}

// Node is this board.
type Node struct {
	Name     string `toml:"name"`     // must appear in cluster.peers when peers are set
	HTTP     string `toml:"http"`     // client requests, UI and API; default ":8080"
	Gossip   string `toml:"gossip"`   // memberlist UDP+TCP; default ":7946"
	Capacity int    `toml:"capacity"` // requests this board runs at once (its slots); default 4
	// CapacityAuto is capacity = "auto": the slots follow what the board
	// completes (capacity_auto.go), starting from Capacity's default.
	CapacityAuto bool `toml:"-"`
	Weight       int  `toml:"weight"` // relative weight for weighted policies; default 1
	// Advertise is the host other boards and redirects use to reach this
	// board's HTTP port when `http` binds a wildcard; default: the gossip host.
	Advertise string `toml:"advertise"`
	// Board is what the devices run on: "auto" (simulated when [sim] is
	// present, else this machine's hardware), "sim" or "host"; default "auto".
	// A host without GPIO fails at start when a device needs a pin or bus.
	Board string `toml:"board"`
	// MDNS announces the board on the LAN over mDNS/DNS-SD (_ews._tcp,
	// <name>.local) for `ews discover`; unset: true. A board whose
	// listener binds loopback announces nothing (node/mdns).
	MDNS *bool `toml:"mdns"`
	// StateDir holds what the board keeps across restarts (the device
	// history, …); default "/var/lib/ews".
	StateDir string `toml:"state_dir"`
	// SecretsDir is the only directory the files named by the cluster-wide
	// configuration's secret keys ([mqtt] password_file, key_file) may be
	// in, symlinks and .. resolved; never the board's bundle, key or token
	// file, nor state_dir (secretsdir.go); default "/etc/ews/secrets".
	SecretsDir string `toml:"secrets_dir"`
	// SetClock: step the system clock to cluster time (needs CAP_SYS_TIME).
	// Parsed and documented, not built: ews corrects its own clock only
	// (docs/DESIGN.md, Time).
	SetClock bool `toml:"set_clock"`
}

// MDNSOn reports whether [node] mdns is on (the default).
func (n Node) MDNSOn() bool { return n.MDNS == nil || *n.MDNS }

// Cluster lists the peers and the timings of the paper's protocol.
type Cluster struct {
	// Peers in rank order, each "name=host:port" (the peer's gossip address).
	// Empty: standalone, this board serves everything itself.
	Peers      []string `toml:"peers"`
	KeyFile    string   `toml:"key_file"`   // file holding the base64 AES key
	Key        string   `toml:"key"`        // inline base64 AES-128/192/256 key (moved off the boot partition on first start)
	Insecure   bool     `toml:"insecure"`   // true: no gossip encryption (tests only)
	TMax       Duration `toml:"tmax"`       // master silence before a takeover; default 1s
	TThreshold Duration `toml:"tthreshold"` // board silence before it is down; default 500ms
	Heartbeat  Duration `toml:"heartbeat"`  // table/report period; default 100ms
	Preempt    bool     `toml:"preempt"`    // a returning lower-rank board takes mastership back
	// VIP is the address that follows the master, e.g. "192.168.1.50/24".
	VIP          string `toml:"vip"`
	VIPInterface string `toml:"vip_interface"` // default: the interface whose subnet holds vip
	// BundleFile is this board's bundle (`ews cluster board`, minted from
	// the admin bundle of `ews cluster init`): alone it gives the gossip
	// key and the token (unless key/key_file, token/token_file are set),
	// its session secret keys the session cookies, its certificate turns
	// on TLS (tls.go) and its verify key checks firmware. The admin bundle
	// itself is refused here.
	BundleFile string `toml:"bundle_file"`
	// NTP lists NTP servers the master follows while one answers ("host"
	// or "host:port"); empty: cluster time is the master's own clock
	// (docs/DESIGN.md, Time).
	NTP []string `toml:"ntp"`
}

// Sched configures the master's queue and dispatch policy.
type Sched struct {
	Policy       string      `toml:"policy"`        // default "priority-lc"
	Mode         string      `toml:"mode"`          // proxy | redirect; default proxy
	Assign       Duration    `toml:"assign"`        // redirect mode: a client talks to its board this long; 0 off; default 30s
	Order        string      `toml:"order"`         // "" (the policy's) | priority | arrival
	Queue        int         `toml:"queue"`         // per class; default 1024
	QueueTimeout Duration    `toml:"queue_timeout"` // default 5s
	QueueTarget  Duration    `toml:"queue_target"`  // CoDel-style sojourn target; default 100ms
	Reserve      float64     `toml:"reserve"`       // share of dispatches kept for lower classes; default 0
	Headroom     string      `toml:"headroom"`      // slots kept free for the first class: off | auto | N; default off
	Stale        string      `toml:"stale"`         // load figures up to a report old: placed | two | reported; default placed (sched.Config.Stale)
	Sticky       string      `toml:"sticky"`        // "" | cookie | source-ip
	Classes      []Class     `toml:"class"`         // [[sched.class]]; first = highest priority; none: the policy's (sched.ClassesFor)
	Proximity    []Proximity `toml:"proximity"`     // [[sched.proximity]]
	// Load weights, baselines and limits of the load-aware policies;
	// defaults are the papers' values (docs/architecture.md, docs/NOTES.md, "Policies").
	Adaptive   LoadModel `toml:"adaptive"`
	Integrated LoadModel `toml:"integrated"` // also proximity's integrated load
	QSC        LoadModel `toml:"qsc"`        // weights cpu mem req net (α β γ δ)
	Socket     LoadModel `toml:"socket"`
}

// Class is one priority class; the first matching rule wins.
type Class struct {
	Name   string   `toml:"name"`
	Match  []string `toml:"match"`  // "METHOD /path/glob" or "*"; ** spans segments
	Weight float64  `toml:"weight"` // request weight for the qsc policy; default 1
}

// Proximity prefers some boards for clients from a network.
type Proximity struct {
	CIDR   string   `toml:"cidr"`
	Prefer []string `toml:"prefer"`
}

// LoadModel holds the weights, baselines and limits of a load formula.
type LoadModel struct {
	Weights   map[string]float64 `toml:"weights"`   // cpu, mem, net, disk, rt
	Baselines map[string]float64 `toml:"baselines"` // value that counts as load 1.0
	Limits    map[string]float64 `toml:"limits"`    // over a limit: weight 100
	Overload  Duration           `toml:"overload"`  // cpu over its limit this long: overloaded
	Suspend   Duration           `toml:"suspend"`   // adaptive: a board over limits.threshold gets no requests this long
}

// HTTP configures the front door and its credentials.
type HTTP struct {
	Auth      string   `toml:"auth"`       // token | basic | none; control endpoints require it unless none
	TokenFile string   `toml:"token_file"` // file with the bearer token
	Token     string   `toml:"token"`      // inline token (alternative to token_file)
	Users     []string `toml:"users"`      // basic: "user:$2a$..." bcrypt hashes
	// ReadAuth also requires credentials for reads (GET of the device API).
	ReadAuth bool `toml:"read_auth"`
	// MaxBody caps a request body in bytes; default 1 MiB.
	MaxBody int64 `toml:"max_body"`
	// ShutdownTimeout bounds how long in-flight requests may finish; default 10s.
	ShutdownTimeout Duration `toml:"shutdown_timeout"`
	// SSEClients caps the GET /events streams open at once on this board;
	// one more gets 503 with Retry-After. 0: the default, 64.
	SSEClients int `toml:"sse_clients"`
	// SSEPerClient caps the public GET /events streams of one client
	// address; 0: the default, 8. The boards' own streams
	// (?scope=local) have their places apart (docs/NOTES.md, Security:
	// Peer streams).
	SSEPerClient int `toml:"sse_per_client"`
	// MaxConnsPerClient caps the connections one client address holds
	// open at once; one more gets 429 with Retry-After. The cluster's
	// boards (at their configured, non-loopback addresses) are not
	// counted. 0: the default, 256.
	MaxConnsPerClient int `toml:"max_conns_per_client"`
	// TLS serves clients and peers over HTTPS on HTTPS with the bundle's
	// CA; unset: on when cluster.bundle_file carries a CA (tls.go).
	TLS   *bool  `toml:"tls"`
	HTTPS string `toml:"https"` // HTTPS listener when TLS is on; default ":8443"
	// HTTPRedirect keeps node.http open when TLS is on, answering only
	// /healthz, /readyz and redirects to HTTPS; false: no plain listener.
	// Default true.
	HTTPRedirect bool `toml:"http_redirect"`
}

// CGI configures /cgi-bin.
type CGI struct {
	Dir       string   `toml:"dir"`        // default /var/lib/ews/cgi-bin
	Timeout   Duration `toml:"timeout"`    // default 10s
	MaxOutput int64    `toml:"max_output"` // bytes; default 1 MiB
	// User runs the programs as this user, so they cannot read ews's
	// secrets; "" = as ews (config_cgi.go).
	User         string `toml:"user"`
	CPUSeconds   int64  `toml:"cpu_seconds"`   // RLIMIT_CPU of each program; default 10
	MaxMemory    int64  `toml:"max_memory"`    // RLIMIT_AS, bytes; default 256 MiB
	MaxProcesses int64  `toml:"max_processes"` // RLIMIT_NPROC of [cgi] user; default 32
}

// Sim configures the simulated board.
type Sim struct {
	DeviceLatency Duration `toml:"device_latency"` // per device read/write
	PageLatency   Duration `toml:"page_latency"`   // emulated cost of a low-priority request
	// How this simulated board differs from others (docs/NOTES.md, Simulated
	// boards); zero = default.
	Speed     float64  `toml:"speed"`       // latencies are divided by it; default 1
	CPUMHz    float64  `toml:"cpu_mhz"`     // cpu capacity it reports; default 4000 (4 cores × 1 GHz)
	MemMB     float64  `toml:"mem_mb"`      // memory size it reports; default 1024
	BaseCPU   float64  `toml:"base_cpu"`    // background cpu share; default 0.05
	ReqCPU    float64  `toml:"request_cpu"` // cpu share one request in flight uses; default 0.1
	BaseMemMB float64  `toml:"base_mem_mb"` // memory in use with nothing running; default 200
	RequestMB float64  `toml:"request_mb"`  // memory per request in flight; default 8
	DiskUsed  float64  `toml:"disk_used"`   // share of disk space in use; default 0.3
	BusyAfter Duration `toml:"busy_after"`  // the board becomes busy this long after start …
	BusyFor   Duration `toml:"busy_for"`    // … for this long (0: never busy) …
	BusyEvery Duration `toml:"busy_every"`  // … and again every busy_every (0: once)
	BusyCPU   float64  `toml:"busy_cpu"`    // background cpu share while busy; default 0.9
	Jitter    float64  `toml:"jitter"`      // ± background cpu noise, seeded by seed
	Seed      uint64   `toml:"seed"`        // seed of the noise; default 1
	// ClockOffset makes this board's wall clock run that far off the
	// host's ("-3h", "+10m", "-30d"), so boards on one host disagree as
	// real ones without an RTC do (docs/DESIGN.md, Time).
	ClockOffset Offset `toml:"clock_offset"`
}

// Device is one [[device]] table: the shape hal opens too (internal/spec).
type Device = spec.Device

// Health lists the checks that keep this board in rotation.
type Health struct {
	Processes []HealthProcess `toml:"process"` // [[health.process]]
	Checks    []HealthCheck   `toml:"check"`   // [[health.check]]
}

// HealthProcess is a critical process that must be running.
type HealthProcess struct {
	Name string `toml:"name"`
}

// HealthCheck is a command that must exit 0.
type HealthCheck struct {
	Command  string   `toml:"command"`
	Interval Duration `toml:"interval"` // default 5s
	Timeout  Duration `toml:"timeout"`  // default interval
	// Runstate reported while the check fails: down (default) or overloaded.
	Runstate string `toml:"runstate"`
}

// Supervise is a helper program ews keeps running.
type Supervise struct {
	Name    string  `toml:"name"`
	Command Command `toml:"command"` // ["program", "arg"] or a shell line
}

// Command is a program to run: an array is the argv as is; a string is a
// shell line, run as /bin/sh -c LINE (internal/spec).
type Command = spec.Command

// Duration is a time.Duration read from a TOML string such as "500ms"
// (internal/spec).
type Duration = spec.Duration

// D is shorthand for building a Duration.
func D(v time.Duration) Duration { return spec.D(v) }
