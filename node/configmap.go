package node

import (
	"os"
	"strings"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/clock"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/automation"
	"github.com/ews-firmware/ews/node/cgi"
	"github.com/ews-firmware/ews/node/health"
	"github.com/ews-firmware/ews/node/history"
	"github.com/ews-firmware/ews/node/mqtt"
	"github.com/ews-firmware/ews/node/rotate"
	"github.com/ews-firmware/ews/node/supervise"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
	"github.com/ews-firmware/ews/state/procload"
	"github.com/ews-firmware/ews/vip"
)

// The one mapping from the boot config onto every package's own options
// (docs/DESIGN.md, Wiring): internal/config reads the file into plain
// types with their lines; configmap*.go, and no other file of node, read
// them: this file puts together boot, configmap_options.go maps each
// package's sections, configmap_check.go runs each package's validation,
// citing the file, line and key of what it refuses.

// boot is what node's files get from the boot config: each package's
// options, and the plain values node itself acts on, mapped once by
// mapConfig. No other file of node reads the parsed config.
type boot struct {
	state   state.Config // this board, its peers, the timings; the key read from its file
	sched   sched.Config
	hal     hal.Config
	poll    time.Duration // a sensor's read period when its [[device]] sets none
	vip     vip.Config    // not Enabled without cluster.vip
	auth    auth.Config
	cgi     cgi.Config
	health  health.Config
	helpers []supervise.Helper
	history history.Options   // [history]; Dir, Registerer and Logger are node's
	auto    automation.Config // [mqtt] and [[rule]]; KeySecret, Clock and Cite set by automation()

	// clock is the board's one wall clock (docs/DESIGN.md, Time): [sim]
	// clock_offset off the host's, corrected to cluster time by state.
	clock       *clock.Clock
	security    *config.Security     // what cluster.bundle_file gives; TLS on or off
	clusterKey  []byte               // nil: no key (insecure, or standalone without one); a rotation's primary (configmap_secrets.go)
	storeKey    []byte               // the users store's secret: the first cluster key, kept across rotations
	rotated     rotate.Saved         // the cluster's secrets this board starts on (configmap_secrets.go); zero alone
	secretsPath string               // where a rotation keeps them; "" not kept
	boardCred   string               // the credential a board shows for its own requests; "" alone (boardcred.go)
	sim         *procload.SimProfile // nil: not a simulated board ([sim] absent)
	simulated   bool                 // the devices run on the simulated board

	file        string         // the boot config's path; "" without one
	secretLines map[string]int // the line of each inline secret (cluster.key, http.token), for backups
	peerList    []string       // cluster.peers as written (backups, the insecure mark key)
	stateDir    string         // node.state_dir
	stateDirSet bool           // written in the file (else the default, used only where it exists)
	mdns        bool
	https       string // http.https
	redirect    bool   // http.http_redirect

	mode              string        // sched.mode: proxy | redirect
	assign            time.Duration // sched.assign
	readAuth          bool
	maxBody           int64
	shutdownTimeout   time.Duration
	sseClients        int
	ssePerClient      int
	maxConnsPerClient int
	pageLatency       time.Duration // [sim] page_latency at the board's speed; 0 off

	// cite puts the file, line and key in front of err, for what only a
	// later step finds (a CGI user, a certificate): config.Errors.
	cite func(key string, err error) error
	// citeDevices does so for each of hal's errors about a device
	// (deviceErrors).
	citeDevices func(err error) error
	// authKey is the key an auth.New error is about (AuthKey).
	authKey string

	// capacityAuto: [node] capacity = "auto", the slots this board reports
	// follow what it completes (capacityauto.go); state.Capacity the start.
	capacityAuto bool

	// storeSeed and storeOwn are the boot file split for the
	// configuration store (configmap_store.go): its cluster-wide sections,
	// which seed the store, and the board's own, which check a document.
	storeSeed, storeOwn []byte
	// storeText is the cluster-wide sections this board runs: storeSeed,
	// or the store's document it took (withStore).
	storeText []byte
	// storeVersion is the store's version storeText is; 0: the boot file's.
	storeVersion uint64
}

// mapConfig checks c with every package's validation (CheckConfig) and
// maps it, reading the secrets it names (key file, bundle, the token for
// the automation, the MQTT password); errors are config.Errors naming
// file, line and key.
func mapConfig(c *config.Config) (*boot, error) {
	if errs := CheckConfig(c); len(errs) > 0 {
		return nil, errs
	}
	sec, err := c.Security()
	if err != nil {
		if e, ok := err.(*config.Error); ok {
			return nil, config.Errors{e}
		}
		return nil, err
	}
	key, err := c.ClusterKey()
	if err != nil {
		return nil, err
	}
	st, err := stateConfig(c)
	if err != nil {
		return nil, err
	}
	vc, err := vipConfig(c)
	if err != nil {
		return nil, err
	}
	auto, err := automationOptions(c)
	if err != nil {
		return nil, err
	}
	h := c.History
	clk := clock.New(nil, c.ClockOffset())
	st.Clock = clk
	if servers := c.Cluster.NTP; len(servers) > 0 { // the master follows them (docs/DESIGN.md, Time)
		st.TimeSource = clk.Source(servers)
	}
	b := &boot{
		state: st, sched: schedConfig(c), hal: halConfig(c), poll: config.DefaultPoll, vip: vc,
		auth: AuthConfig(c), cgi: cgiConfig(c), health: healthConfig(c), helpers: supervised(c),
		history: history.Options{Flush: h.Flush.Duration, Full: h.Full.Duration, Keep: h.Keep.Duration,
			Resolution: h.Resolution.Duration, MaxBytes: int64(h.MaxMB) << 20},
		auto: auto, clock: clk,
		security: sec, clusterKey: key, sim: simProfileOf(c.Sim), simulated: simulated(c),
		file: c.Path, secretLines: map[string]int{}, peerList: c.Cluster.Peers,
		stateDir: c.Node.StateDir, mdns: c.Node.MDNSOn(), https: c.HTTP.HTTPS, redirect: c.HTTP.HTTPRedirect,
		mode: c.Sched.Mode, assign: c.Sched.Assign.Duration, capacityAuto: c.Node.CapacityAuto,
		readAuth: c.HTTP.ReadAuth, maxBody: c.HTTP.MaxBody, shutdownTimeout: c.HTTP.ShutdownTimeout.Duration,
		sseClients: c.HTTP.SSEClients, ssePerClient: c.HTTP.SSEPerClient, maxConnsPerClient: c.HTTP.MaxConnsPerClient,
		cite:        func(key string, err error) error { return config.Errors{c.Errorf(key, "%v", err)} },
		citeDevices: func(err error) error { return deviceErrors(c, err) },
		authKey:     AuthKey(c),
	}
	_, b.stateDirSet = c.Lines["node.state_dir"] // before rotatedSecrets: a state_dir not made yet is still where the secrets go
	if err := b.rotatedSecrets(); err != nil {
		return nil, err
	}
	b.boardCred = boardCredential(st, b.clusterKey, b.auth)
	if b.auto.Token == "" || (b.boardCred != "" && sec.Bundle != nil && sec.Bundle.AdminSeed() != nil) {
		b.auto.Token = b.boardCred // the one every board of a cluster of this build's bundles knows (boardcred.go)
	}
	b.storeSeed, b.storeOwn = storeTexts(c)
	b.storeText = b.storeSeed
	for _, k := range []string{"cluster.key", "http.token"} {
		if l := c.Lines[k]; l > 0 {
			b.secretLines[k] = l
		}
	}
	if c.Sim != nil && c.Sim.PageLatency.Duration > 0 {
		b.pageLatency = c.Sim.Scaled(c.Sim.PageLatency.Duration) // [sim] speed
	}
	return b, nil
}

// automationOptions maps [mqtt] and [[rule]] and reads the secrets they
// need: the token their commands present, the broker password.
func automationOptions(c *config.Config) (automation.Config, error) {
	a := automation.Config{On: c.MQTT != nil || len(c.Rules) > 0}
	if !a.On {
		return a, nil
	}
	if c.HTTP.Auth == "token" {
		a.Token = c.HTTP.Token
		if a.Token == "" && c.HTTP.TokenFile != "" { // else the board credential (boardcred.go)
			b, err := os.ReadFile(c.HTTP.TokenFile)
			if err != nil {
				return a, config.Errors{c.Errorf("http.token_file", "automation: %v", err)}
			}
			a.Token = strings.TrimSpace(string(b))
		}
	}
	if m := c.MQTT; m != nil {
		u, err := m.BrokerURL()
		if err != nil {
			return a, config.Errors{c.Errorf("mqtt.broker", "%v", err)}
		}
		pass, err := m.Password()
		if err != nil {
			return a, config.Errors{c.Errorf("mqtt.password_file", "%v", err)}
		}
		if m.PasswordFile != "" && pass == "" {
			return a, config.Errors{c.Errorf("mqtt.password_file", "%s is empty: put the broker password in it", m.PasswordFile)}
		}
		if m.Secure() {
			a.TLS = &mqtt.TLSFiles{CAFile: m.CAFile, CertFile: m.CertFile, KeyFile: m.KeyFile}
		}
		a.MQTT = &mqtt.Options{Broker: u, CAFile: m.CAFile, User: m.User, Password: pass,
			Topics: mqtt.Topics{Prefix: m.Prefix, Discovery: m.DiscoveryPrefix}, Discovery: m.Discovery}
	}
	a.Rules = ruleList(c)
	return a, nil
}

// simProfileOf maps [sim]'s load model; nil without [sim].
func simProfileOf(s *config.Sim) *procload.SimProfile {
	if s == nil {
		return nil
	}
	return &procload.SimProfile{CPUMHz: s.CPUMHz, MemMB: s.MemMB, BaseCPU: s.BaseCPU, ReqCPU: s.ReqCPU, BusyCPU: s.BusyCPU,
		BaseMemMB: s.BaseMemMB, RequestMB: s.RequestMB, DiskUsed: s.DiskUsed, Jitter: s.Jitter,
		BusyAfter: s.BusyAfter.Duration, BusyFor: s.BusyFor.Duration, BusyEvery: s.BusyEvery.Duration, Seed: s.Seed}
}
