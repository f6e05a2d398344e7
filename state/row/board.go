// Package row is a board's row of the cluster table (Board, Load, Runstate): what state gossips and sched dispatches on, without memberlist.
package row

// Board is one board's row: a row of GET /api/cluster's nodes[] and the
// master dispatcher's input, the same type for both (state.Board). In a
// state.View it is the master's table; from state.Cluster.Boards it is the
// board's own last report. Either way Linknum is the board's own in-flight
// count (invariant 3).
type Board struct {
	Name     string   `json:"name"`
	Rank     int      `json:"rank"`
	Addr     string   `json:"addr"` // gossip host:port from cluster.peers
	HTTP     string   `json:"http"` // from the board's own report; "" until heard
	Linknum  int      `json:"linknum"`
	Capacity int      `json:"capacity"`
	Weight   int      `json:"weight"`
	Runstate Runstate `json:"runstate"` // "joining" | "running" | "overloaded" | "down" | "revoked" in JSON
	Load     Load     `json:"load"`
	// LastSeenMs is how long ago the master last heard the board, as of now;
	// -1 when it never has.
	LastSeenMs int64 `json:"last_seen_ms"`
	// AuthMismatch is set (in a View) when the board's reported credentials
	// fingerprint differs from the master's: it refuses the requests the
	// master forwards with 401. Omitted when false.
	AuthMismatch bool `json:"auth_mismatch,omitempty"`
	// Simulated: the board runs on the simulated board (its report says
	// so); its devices drive no hardware.
	Simulated bool `json:"simulated,omitempty"`
	// LoadUnknown lists the load figures this board could not read
	// (["cpu_mhz"], …): they show as 0. Only the board's own row has it, in
	// its own /api/cluster (the reports do not carry it). Omitted when
	// every figure was read.
	LoadUnknown LoadFigures `json:"load_unknown,omitempty"`
	// RTMs is the board's response time in milliseconds as the master
	// measures it (its /healthz probes, smoothed): paper 003's monitoring
	// table. Only the master's /api/cluster has it; omitted when unknown.
	RTMs float64 `json:"rt_ms,omitempty"`
	// ClockOffsetMs is the board's clock minus the clock of the board
	// answering, in milliseconds, RTT-corrected (docs/DESIGN.md, Time): 0
	// on the answering board's own row; omitted while not measured. Reports
	// do not carry it.
	ClockOffsetMs *int64 `json:"clock_offset_ms,omitempty"`
	// ClientNets is the board's nearest client networks with its round
	// trip to each (003's scheme 3, state/nearnet): what its node meta
	// says in gossip, not its report. Omitted when it measured none.
	ClientNets []ClientNet `json:"client_nets,omitempty"`
}

// ClientNet is one client network a board serves and its round trip to
// it: a /24 (IPv4) or /48 (IPv6), in milliseconds.
type ClientNet struct {
	Net   string  `json:"net"`
	RTTMs float64 `json:"rtt_ms"`
}
