package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// delayLineArg makes this binary the delay line of the emulated network
// (netdist.go) where the kernel has no sch_netem: run inside the router
// namespace as `__delay-line READY SUBNET NEAR FAR`, it makes the TUN
// device dly0, routes every forwarded IPv4 packet into it, and writes each
// one back after its delay; it writes READY once routing goes through it.
const delayLineArg = "__delay-line"

// lineDev is the delay line's TUN device; lineTable the routing table that
// sends forwarded packets into it.
const (
	lineDev   = "dly0"
	lineTable = "77"
)

// oneWay is a packet's delay: half the near round trip between two
// addresses of one site (the third octet of SUBNET.site.host), half the
// far one between sites; zero for a packet to or from site 0 (the
// harness, netDist.hostIP) and for a packet that is not IPv4 between two
// addresses of the subnet.
type oneWay struct {
	prefix    [2]byte
	near, far time.Duration
}

func newOneWay(subnet string, near, far time.Duration) (oneWay, error) {
	a, b, ok := strings.Cut(subnet, ".")
	x, errA := strconv.ParseUint(a, 10, 8)
	y, errB := strconv.ParseUint(b, 10, 8)
	if !ok || errA != nil || errB != nil || near < 0 || far < 0 {
		return oneWay{}, fmt.Errorf("paper: delay line: subnet %q near %v far %v: want A.B and round trips >= 0", subnet, near, far)
	}
	return oneWay{prefix: [2]byte{byte(x), byte(y)}, near: near / 2, far: far / 2}, nil
}

// delay is the packet's one-way delay and whether it is far.
func (o oneWay) delay(pkt []byte) (time.Duration, bool) {
	if len(pkt) < 20 || pkt[0]>>4 != 4 {
		return 0, false
	}
	src, dst := pkt[12:16], pkt[16:20]
	if src[0] != o.prefix[0] || src[1] != o.prefix[1] || dst[0] != o.prefix[0] || dst[1] != o.prefix[1] {
		return 0, false
	}
	switch {
	case src[2] == 0 || dst[2] == 0: // the harness's own polls
		return 0, false
	case src[2] == dst[2]:
		return o.near, false
	}
	return o.far, true
}

// delayLineArgs parses the helper's arguments after delayLineArg.
func delayLineArgs(args []string) (ready string, o oneWay, err error) {
	if len(args) != 4 {
		return "", oneWay{}, fmt.Errorf("paper: delay line: want READY SUBNET NEAR FAR, got %q", args)
	}
	near, err1 := time.ParseDuration(args[2])
	far, err2 := time.ParseDuration(args[3])
	if err1 != nil || err2 != nil {
		return "", oneWay{}, fmt.Errorf("paper: delay line: round trips %q %q", args[2], args[3])
	}
	o, err = newOneWay(args[1], near, far)
	return args[0], o, err
}
