// Package demo starts a local cluster of simulated boards on loopback, each a separate `ews run` process.
package demo

import (
	"fmt"
	"strings"
)

// Token is the bearer token of every demo board (printed with the URLs).
const Token = "demo-token"

// Board is one demo board's addresses.
type Board struct {
	Name   string
	HTTP   string // host:port
	Gossip string // host:port
}

// Boards lays out n boards on loopback: HTTP on base, base+1, ...; gossip
// on base+100, base+101, ...
func Boards(n, base int) []Board {
	out := make([]Board, n)
	for i := range out {
		out[i] = Board{
			Name:   fmt.Sprintf("ews%d", i+1),
			HTTP:   fmt.Sprintf("127.0.0.1:%d", base+i),
			Gossip: fmt.Sprintf("127.0.0.1:%d", base+100+i),
		}
	}
	return out
}

// Config returns the boot config of board i of boards: a simulated board
// with devices spread over the cluster, a shared key and token auth.
func Config(boards []Board, i int, key, cgiDir string) string {
	b := boards[i]
	var s strings.Builder
	fmt.Fprintf(&s, "# ews demo board %s (generated)\n[node]\nname = %q\nhttp = %q\ngossip = %q\ncapacity = 4\n\n", b.Name, b.Name, b.HTTP, b.Gossip)
	if len(boards) > 1 {
		peers := make([]string, len(boards))
		for j, p := range boards {
			peers[j] = fmt.Sprintf("%q", p.Name+"="+p.Gossip)
		}
		fmt.Fprintf(&s, "[cluster]\npeers = [%s]\nkey = %q\ntmax = \"1s\"\ntthreshold = \"500ms\"\nheartbeat = \"100ms\"\n\n", strings.Join(peers, ", "), key)
	}
	fmt.Fprintf(&s, "[http]\nauth = \"token\"\ntoken = %q\n\n[cgi]\ndir = %q\n\n[sim]\ndevice_latency = \"20ms\"\npage_latency = \"0s\"\n\n", Token, cgiDir)
	on := func(k int) string { return boards[k%len(boards)].Name }
	devices := []struct{ name, driver, node, extra string }{
		{"relay1", "sim-switch", on(1), "interlock = [\"relay2\"]\ninitial = \"off\"\non_stop = \"off\"\n"},
		{"relay2", "sim-switch", on(1), "interlock = [\"relay1\"]\ninitial = \"off\"\non_stop = \"off\"\n"},
		{"led1", "sim-pwm", on(2), ""},
		{"button1", "sim-button", on(0), ""},
		{"temp1", "sim-sensor", on(0), "units = \"°C\"\nbaseline = 21.5\ndrift = 0.05\n"},
		{"pump1", "sim-switch", "any", ""},
	}
	for _, d := range devices {
		fmt.Fprintf(&s, "[[device]]\nname = %q\ndriver = %q\nnode = %q\n%s\n", d.name, d.driver, d.node, d.extra)
	}
	return s.String()
}
