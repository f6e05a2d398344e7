package state

import (
	"fmt"
	"time"

	"github.com/ews-firmware/ews/internal/clock"
)

// Config is what a Cluster needs to know of its board and its peers. The
// boot config maps its [node] and [cluster] keys onto it; tests and the
// demo fill it directly. Start from DefaultConfig: every field there says
// its default and what changing it costs.
type Config struct {
	// Name is this board's name; it must be one of Peers (when Peers is
	// set). Default "ews1".
	Name string

	// Peers are the configured boards in rank order (rank 0 first), this
	// board included. Empty: standalone, this board is master at once and
	// binds no gossip port. Default empty.
	Peers []Peer

	// Gossip is the host:port memberlist binds (UDP and TCP). An empty host
	// binds every interface; port 0 lets the kernel pick one (tests).
	// Default ":7946", memberlist's own port.
	Gossip string

	// HTTP is the address this board's HTTP server listens on. The address
	// other boards reach it at is derived from it (see Advertise) unless the
	// Local implements HTTPAddrer. Default ":8080".
	HTTP string

	// Advertise is the host other boards use to reach a wildcard HTTP
	// listener. Empty: the host of this board's gossip address. Default "".
	Advertise string

	// Capacity is how many requests this board runs at once (its slots),
	// carried in its reports. More slots keep a slow board busier but
	// queue less at the master. Default 4.
	Capacity int

	// Weight is the board's relative weight for the weighted policies,
	// carried in its reports. Default 1.
	Weight int

	// Simulated says, in the board's reports, that it runs on the
	// simulated board; /api/cluster shows it. Default false.
	Simulated bool

	// Clock is the board's clock (internal/clock): heartbeats carry its
	// Local reading, and the Cluster sets its correction to the master's
	// clock (clocks.go). Nil: a clock of its own without offset.
	Clock *clock.Clock

	// TimeSource, when set, is what the master follows instead of its own
	// clock ([cluster] ntp: clock.Clock.NTP): the correction that makes
	// Clock.Now the source's time, and who said it. The master asks it
	// every NTPEvery (ntp.go). Nil: cluster time is the master's clock.
	TimeSource func() (time.Duration, string, error)

	// Key is the AES-128/192/256 key for gossip. Nil with Insecure false
	// on a clustered board is refused. Default nil.
	Key []byte

	// Keys are further gossip keys this board decrypts with, Key staying
	// the one it encrypts with: a rotation of the cluster's secrets in
	// progress when the board (re)started (node/rotate; docs/NOTES.md
	// "Security"). Default nil.
	Keys [][]byte

	// Insecure turns gossip encryption off: any host on the network can
	// then read and inject the table. Tests only. Default false.
	Insecure bool

	// Heartbeat is how often the master sends the table and every board
	// its report. Shorter reacts faster to load and failures and costs
	// proportionally more UDP packets and CPU. Default 100ms.
	Heartbeat time.Duration

	// TMax is how long a follower waits without a table before it takes
	// over, and how long a board listens at start before it may claim.
	// Shorter fails over sooner and risks a needless takeover when
	// packets are lost or a board stalls. Must exceed Heartbeat. Default 1s.
	TMax time.Duration

	// TThreshold is how long the master waits without a board's report
	// before it marks the board down (no more requests). Shorter stops
	// sending work to a dead board sooner and marks a slow one down more
	// often. Must exceed Heartbeat. Default 500ms.
	TThreshold time.Duration

	// Preempt lets a returning lower-rank board take mastership back from
	// a higher-rank master after TMax. It keeps the master where the
	// operator ranked it at the price of a second takeover. Default false.
	Preempt bool

	// ProtocolVersion is the version this board speaks, in
	// ProtocolVersionMin..ProtocolVersionMax. Set it to 1 while boards of
	// an older build (which accept only version 1) are still in the
	// cluster: tables then go without the master's queue stats. Without
	// an Identity a board sends ProtocolVersionUnsigned at most (version
	// 5 is signed). Default ProtocolVersionMax.
	ProtocolVersion uint8

	// Identity is this board's certificate from the cluster CA and its key
	// (a board bundle's cert and cert_key): with it the board signs its
	// gossip and refuses messages naming a board that signs unless they
	// carry that board's signature (invariant 11). Nil: nothing is signed
	// or checked, and any board holding the cluster key can speak for any
	// other. Default nil.
	Identity *Identity
	// SealedFile remembers, across restarts, the boards seen sealing their
	// gossip (under [node] state_dir): an unsealed message naming one is
	// refused from the start, not only once it sealed in this run. "": in
	// memory only.
	SealedFile string
	// relay makes the cluster relay whatever its size (tests of the
	// relayed protocol on a few loopback boards); Relayed decides else.
	relay bool
}

// DefaultConfig is a standalone board with the protocol timings of
// docs/DESIGN.md.
func DefaultConfig() Config {
	return Config{
		Name:            "ews1",
		Gossip:          ":7946",
		HTTP:            ":8080",
		Capacity:        4,
		Weight:          1,
		Heartbeat:       100 * time.Millisecond,
		TMax:            time.Second,
		TThreshold:      500 * time.Millisecond,
		ProtocolVersion: ProtocolVersionMax,
	}
}

// Standalone reports whether no peers are configured.
func (c *Config) Standalone() bool { return len(c.Peers) == 0 }

// Validate checks what the Cluster relies on; the error names the field.
func (c *Config) Validate() error {
	if c.Heartbeat <= 0 || c.TMax <= 0 || c.TThreshold <= 0 {
		return fmt.Errorf("state: cluster timings must be positive (heartbeat %v, tmax %v, tthreshold %v)", c.Heartbeat, c.TMax, c.TThreshold)
	}
	if c.TMax <= c.Heartbeat {
		return fmt.Errorf("state: tmax %v must be longer than heartbeat %v", c.TMax, c.Heartbeat)
	}
	if c.TThreshold <= c.Heartbeat {
		return fmt.Errorf("state: tthreshold %v must be longer than heartbeat %v", c.TThreshold, c.Heartbeat)
	}
	if c.ProtocolVersion < ProtocolVersionMin || c.ProtocolVersion > ProtocolVersionMax {
		return fmt.Errorf("state: protocol version %d: this build speaks %d..%d", c.ProtocolVersion, ProtocolVersionMin, ProtocolVersionMax)
	}
	if c.Insecure && len(c.Key) > 0 {
		return fmt.Errorf("state: board %q: insecure with a cluster key would turn gossip encryption off: drop one", c.Name)
	}
	if c.Identity != nil {
		if err := c.Identity.validate(c.Name); err != nil {
			return err
		}
	}
	if !c.Standalone() && len(c.Key) == 0 && !c.Insecure {
		return fmt.Errorf("state: no cluster key for board %q: set a key (or insecure, never on a real network)", c.Name)
	}
	return nil
}
