package nearnet

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"time"
)

// The wire form of a board's nearest networks, as it rides after the
// protocol version in the board's node meta (state.delegate.NodeMeta):
// 'N', then per network 21 bytes: the address (16, IPv4 as IPv4-mapped),
// the prefix length (IPv4 counted as IPv4) and the round trip in µs
// (uint32, big-endian). Builds that read only the meta's first two bytes
// ignore it, so it needs no new protocol version; a tail that opens with
// another byte is a later build's and is ignored.
const (
	wireTag   = 'N'
	entrySize = 16 + 1 + 4
)

// errLength is a malformed report: not a whole number of entries.
var errLength = errors.New("nearnet: report is not a whole number of 21-byte entries")

// Encode is nets' wire form, the first MaxNets of them; nil for none.
func Encode(nets []Net) []byte {
	if len(nets) == 0 {
		return nil
	}
	b := []byte{wireTag}
	for _, n := range nets[:min(len(nets), MaxNets)] {
		a := n.Prefix.Addr().As16()
		b = binary.BigEndian.AppendUint32(append(append(b, a[:]...), byte(n.Prefix.Bits())), uint32(min(max(n.RTT, 0), MaxRTT)/time.Microsecond))
	}
	return b
}

// Decode reads a wire form as Encode writes it (nil or another tag: none);
// one whose length is not whole entries is an error and none of it is
// taken. Entries are not checked here (a prefix longer than its address
// decodes as an invalid one): Clean does that.
func Decode(b []byte) ([]Net, error) {
	if len(b) == 0 || b[0] != wireTag {
		return nil, nil
	}
	if (len(b)-1)%entrySize != 0 {
		return nil, errLength
	}
	var nets []Net
	for e := b[1:]; len(e) > 0; e = e[entrySize:] {
		a := netip.AddrFrom16([16]byte(e[:16])).Unmap()
		us := binary.BigEndian.Uint32(e[17:])
		nets = append(nets, Net{netip.PrefixFrom(a, int(e[16])), time.Duration(us) * time.Microsecond})
	}
	return nets, nil
}
