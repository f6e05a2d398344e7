// Package bootconf maps the boot config onto every module's typed options, once, and checks it as they would.
package bootconf

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
// types with their lines; this package, and no other of node, reads
// them: this file puts together Boot, options.go maps each
// package's sections, check.go runs each package's validation,
// citing the file, line and key of what it refuses.

// Boot is what node gets from the boot config: each module's options,
// and the plain values node itself acts on, mapped once by Map. Nothing
// else in node reads the parsed config.
type Boot struct {
	State   state.Config // this board, its peers, the timings; the key read from its file
	Sched   sched.Config
	HAL     hal.Config
	Poll    time.Duration // a sensor's read period when its [[device]] sets none
	VIP     vip.Config    // not Enabled without cluster.vip
	Auth    auth.Config
	CGI     cgi.Config
	Health  health.Config
	Helpers []supervise.Helper
	History history.Options   // [history]; Dir, Registerer and Logger are node's
	Auto    automation.Config // [mqtt] and [[rule]]; KeySecret, Clock and Cite set by automation()

	// Clock is the board's one wall clock (docs/DESIGN.md, Time): [sim]
	// clock_offset off the host's, corrected to cluster time by state.
	Clock       *clock.Clock
	Security    *config.Security     // what cluster.bundle_file gives; TLS on or off
	ClusterKey  []byte               // nil: no key (insecure, or standalone without one); a rotation's primary (secrets.go)
	StoreKey    []byte               // the users store's secret: the first cluster key, kept across rotations
	Rotated     rotate.Saved         // the cluster's secrets this board starts on (secrets.go); zero alone
	SecretsPath string               // where a rotation keeps them; "" not kept
	BoardCred   string               // the credential a board shows for its own requests; "" alone (boardcred.go)
	Sim         *procload.SimProfile // nil: not a simulated board ([sim] absent)
	Simulated   bool                 // the devices run on the simulated board

	File        string         // the boot config's path; "" without one
	SecretLines map[string]int // the line of each inline secret (cluster.key, http.token), for backups
	PeerList    []string       // cluster.peers as written (backups, the insecure mark key)
	StateDir    string         // node.state_dir
	StateDirSet bool           // written in the file (else the default, used only where it exists)
	MDNS        bool
	HTTPS       string // http.https
	Redirect    bool   // http.http_redirect

	Mode              string        // sched.mode: proxy | redirect
	Assign            time.Duration // sched.assign
	ReadAuth          bool
	MaxBody           int64
	ShutdownTimeout   time.Duration
	SSEClients        int
	SSEPerClient      int // [http] sse_per_client, defaultSSEPerClient when unset
	MaxConnsPerClient int
	PageLatency       time.Duration // [sim] page_latency at the board's speed; 0 off

	// Cite puts the file, line and key in front of err, for what only a
	// later step finds (a CGI user, a certificate): config.Errors.
	Cite func(key string, err error) error
	// CiteDevices does so for each of hal's errors about a device
	// (deviceErrors).
	CiteDevices func(err error) error
	// AuthKey is the key an auth.New error is about (AuthKey).
	AuthKey string

	// CapacityAuto: [node] capacity = "auto", the slots this board reports
	// follow what it completes (node/report); state.Capacity the start.
	CapacityAuto bool

	// StoreSeed and StoreOwn are the boot file split for the
	// configuration store (store.go): its cluster-wide sections,
	// which seed the store, and the board's own, which check a document.
	StoreSeed, StoreOwn []byte
	// StoreText is the cluster-wide sections this board runs: storeSeed,
	// or the store's document it took (withStore).
	StoreText []byte
	// StoreVersion is the store's version storeText is; 0: the boot file's.
	StoreVersion uint64
}

// Map checks c with every package's validation (CheckConfig) and
// maps it, reading the secrets it names (key file, bundle, the token for
// the automation, the MQTT password); errors are config.Errors naming
// file, line and key.
func Map(c *config.Config) (*Boot, error) {
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
	b := &Boot{
		State: st, Sched: schedConfig(c), HAL: halConfig(c), Poll: config.DefaultPoll, VIP: vc,
		Auth: AuthConfig(c), CGI: cgiConfig(c), Health: healthConfig(c), Helpers: supervised(c),
		History: history.Options{Flush: h.Flush.Duration, Full: h.Full.Duration, Keep: h.Keep.Duration,
			Resolution: h.Resolution.Duration, MaxBytes: int64(h.MaxMB) << 20},
		Auto: auto, Clock: clk,
		Security: sec, ClusterKey: key, Sim: simProfileOf(c.Sim), Simulated: simulated(c),
		File: c.Path, SecretLines: map[string]int{}, PeerList: c.Cluster.Peers,
		StateDir: c.Node.StateDir, MDNS: c.Node.MDNSOn(), HTTPS: c.HTTP.HTTPS, Redirect: c.HTTP.HTTPRedirect,
		Mode: c.Sched.Mode, Assign: c.Sched.Assign.Duration, CapacityAuto: c.Node.CapacityAuto,
		ReadAuth: c.HTTP.ReadAuth, MaxBody: c.HTTP.MaxBody, ShutdownTimeout: c.HTTP.ShutdownTimeout.Duration,
		SSEClients: c.HTTP.SSEClients, SSEPerClient: ssePerClient(c.HTTP.SSEPerClient), MaxConnsPerClient: c.HTTP.MaxConnsPerClient,
		Cite:        func(key string, err error) error { return config.Errors{c.Errorf(key, "%v", err)} },
		CiteDevices: func(err error) error { return deviceErrors(c, err) },
		AuthKey:     AuthKey(c),
	}
	_, b.StateDirSet = c.Lines["node.state_dir"] // before rotatedSecrets: a state_dir not made yet is still where the secrets go
	if err := b.rotatedSecrets(); err != nil {
		return nil, err
	}
	b.BoardCred = BoardCredential(st, b.ClusterKey, b.Auth)
	if b.Auto.Token == "" || (b.BoardCred != "" && sec.Bundle != nil && sec.Bundle.AdminSeed() != nil) {
		b.Auto.Token = b.BoardCred // the one every board of a cluster of this build's bundles knows (boardcred.go)
	}
	b.StoreSeed, b.StoreOwn = storeTexts(c)
	b.StoreText = b.StoreSeed
	for _, k := range []string{"cluster.key", "http.token"} {
		if l := c.Lines[k]; l > 0 {
			b.SecretLines[k] = l
		}
	}
	if c.Sim != nil && c.Sim.PageLatency.Duration > 0 {
		b.PageLatency = c.Sim.Scaled(c.Sim.PageLatency.Duration) // [sim] speed
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

// defaultSSEPerClient is [http] sse_per_client when unset.
const defaultSSEPerClient = 8

func ssePerClient(set int) int {
	if set > 0 {
		return set
	}
	return defaultSSEPerClient
}
