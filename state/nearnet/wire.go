package nearnet

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"time"
)

// The wire form of a board's nearest networks, as it rides after the
// protocol version in the board's node meta (state.delegate.NodeMeta):
//
//	'N' count { family(4|6) bits addr[ceil(bits/8)] uvarint(rtt µs) }…
//
// Builds that read only the meta's first two bytes ignore it, so it needs
// no new protocol version. A tail that opens with another byte is a later
// build's and is ignored.
const wireTag = 'N'

// errTruncated is a tail that ends inside an entry.
var errTruncated = errors.New("nearnet: report truncated")

// Encode is nets' wire form, the first MaxNets of them; nil for none.
func Encode(nets []Net) []byte {
	nets = nets[:min(len(nets), MaxNets)]
	if len(nets) == 0 {
		return nil
	}
	b := []byte{wireTag, byte(len(nets))}
	for _, n := range nets {
		a, bits := n.Prefix.Addr(), n.Prefix.Bits()
		fam, raw := byte(6), a.As16()
		addr := raw[:]
		if a.Is4() {
			v4 := a.As4()
			fam, addr = 4, v4[:]
		}
		b = append(b, fam, byte(bits))
		b = append(b, addr[:(bits+7)/8]...)
		b = binary.AppendUvarint(b, uint64(max(n.RTT, 0)/time.Microsecond))
	}
	return b
}

// Decode reads a wire form as Encode writes it (nil or another tag: none).
// A malformed one (a family not 4 or 6, more bits than the family has,
// truncated) is an error and none of it is taken; entries are not
// checked here: Clean does that.
func Decode(b []byte) ([]Net, error) {
	if len(b) == 0 || b[0] != wireTag {
		return nil, nil
	}
	if len(b) < 2 {
		return nil, errTruncated
	}
	count, b := int(b[1]), b[2:]
	nets := make([]Net, 0, min(count, MaxNets))
	for i := range count {
		if len(b) < 2 {
			return nil, errTruncated
		}
		fam, bits := b[0], int(b[1])
		size := map[byte]int{4: 32, 6: 128}[fam]
		if size == 0 {
			return nil, fmt.Errorf("nearnet: entry %d: address family %d (want 4 or 6)", i, fam)
		}
		if bits > size {
			return nil, fmt.Errorf("nearnet: entry %d: /%d is longer than an IPv%d address", i, bits, fam)
		}
		n := (bits + 7) / 8
		if len(b) < 2+n {
			return nil, errTruncated
		}
		var raw [16]byte
		copy(raw[:], b[2:2+n])
		b = b[2+n:]
		us, used := binary.Uvarint(b)
		if used <= 0 {
			return nil, errTruncated
		}
		b = b[used:]
		a := netip.AddrFrom16(raw)
		if fam == 4 {
			a = netip.AddrFrom4([4]byte(raw[:4]))
		}
		rtt := MaxRTT + time.Microsecond // absurd: Clean refuses it
		if us <= uint64(MaxRTT/time.Microsecond) {
			rtt = time.Duration(us) * time.Microsecond
		}
		nets = append(nets, Net{netip.PrefixFrom(a, bits), rtt})
	}
	return nets, nil
}
