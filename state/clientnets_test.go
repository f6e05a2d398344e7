//go:build !lite

package state

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/state/nearnet"
)

// TestClientNetsGossiped: a board's nearest client networks reach every
// board in its node meta (003's scheme 3): the master's ClientRTT ranks by
// them and every view's row shows them; a new set replaces the old.
func TestClientNetsGossiped(t *testing.T) {
	var peers []string
	for i := range 2 {
		peers = append(peers, fmt.Sprintf("ews%d=127.0.0.1:%d", i+1, freePort(t)))
	}
	var bs []*board
	for i := range 2 {
		bs = append(bs, startBoard(t, testConfig(fmt.Sprintf("ews%d", i+1), peers, testKey)))
	}
	waitAgreedMaster(t, "a master", bs, 0)
	client := netip.MustParseAddr("10.7.1.9")
	bs[1].c.SetClientNets([]nearnet.Net{{Prefix: netip.MustParsePrefix("10.7.1.0/24"), RTT: 5 * time.Millisecond}})
	for _, viewer := range bs {
		testutil.WaitFor(t, "ews2's networks at "+viewer.c.Self(), testutil.DefaultLimit, func() (bool, string) {
			d, ok := viewer.c.ClientRTT("ews2", client)
			return ok && d == 5*time.Millisecond, fmt.Sprint(d, ok)
		})
	}
	v := bs[0].c.Snapshot()
	if got := fmt.Sprint(v.Nodes[1].ClientNets); got != "[{10.7.1.0/24 5}]" || v.Nodes[0].ClientNets != nil {
		t.Errorf("rows' client_nets %v and %v", v.Nodes[0].ClientNets, v.Nodes[1].ClientNets)
	}
	bs[1].c.SetClientNets([]nearnet.Net{{Prefix: netip.MustParsePrefix("10.7.2.0/24"), RTT: 80 * time.Millisecond}})
	testutil.WaitFor(t, "ews2's new networks at ews1", testutil.DefaultLimit, func() (bool, string) {
		_, old := bs[0].c.ClientRTT("ews2", client)
		d, ok := bs[0].c.ClientRTT("ews2", netip.MustParseAddr("10.7.2.1"))
		return !old && ok && d == 80*time.Millisecond, fmt.Sprint(old, d, ok)
	})
}

// TestClientNetsFromMeta: what a member's node meta carries is taken,
// cleaned; a malformed one is refused with a log naming the board and the
// last good one kept; a meta of the last build (none) forgets it.
func TestClientNetsFromMeta(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	var n nearMeta
	client := netip.MustParseAddr("10.7.1.9")
	good := append([]byte{metaMagic, 5}, nearnet.Encode([]nearnet.Net{{Prefix: netip.MustParsePrefix("10.7.1.0/24"), RTT: 5 * time.Millisecond}})...)
	for _, c := range []struct {
		name   string
		meta   []byte
		rtt    time.Duration // 0: none
		logged string
	}{
		{"good", good, 5 * time.Millisecond, ""},
		{"malformed: refused, last kept", []byte{metaMagic, 5, 'N', 1, 9, 24, 10, 7, 1, 5}, 5 * time.Millisecond, "whole number"},
		{"version only: none measured", []byte{metaMagic, 5}, 0, ""},
		{"good again", good, 5 * time.Millisecond, ""},
		{"too many: nearest kept", append([]byte{metaMagic, 5}, manyNets()...), time.Millisecond, "over the limit"},
		{"the last build: no meta", nil, 0, ""},
	} {
		logs.Reset()
		n.fromMeta(log, "ews2", c.meta)
		d, ok := n.table.RTT("ews2", client)
		if (c.rtt == 0) == ok || d != c.rtt {
			t.Errorf("%s: RTT %v %v, want %v", c.name, d, ok, c.rtt)
		}
		if c.logged != "" && (!strings.Contains(logs.String(), c.logged) || !strings.Contains(logs.String(), "board=ews2")) {
			t.Errorf("%s: log %q, want %q", c.name, logs.String(), c.logged)
		}
	}
}

// manyNets is a meta tail of nearnet.MaxNets+2 networks, 10.7.1.0/24 the
// nearest at 1 ms; Encode writes at most MaxNets, so this joins two.
func manyNets() []byte {
	var nets []nearnet.Net
	for i := range nearnet.MaxNets + 2 {
		nets = append(nets, nearnet.Net{Prefix: netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 7, byte(i + 1), 0}), 24), RTT: time.Duration(i+1) * time.Millisecond})
	}
	return append(nearnet.Encode(nets[:nearnet.MaxNets]), nearnet.Encode(nets[nearnet.MaxNets:])[1:]...)
}
