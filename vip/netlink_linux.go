package vip

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// rtnl is Addrs over a route netlink socket, its three requests (add, delete, dump an interface's
// IPv4 addresses) written by hand: jsimonetti/rtnetlink with mdlayher/netlink cost the board
// binary ~0.2 MB for them (docs/notes/lighter-boards.md). The messages are what rtnetlink sent.
type rtnl struct {
	mu  sync.Mutex // one request at a time: replies are read in order
	fd  int
	seq uint32
}

func dialNetlink() (Addrs, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, fmt.Errorf("vip: open netlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("vip: open netlink socket: %w", err)
	}
	return &rtnl{fd: fd}, nil
}

func (r *rtnl) Has(ifindex int, p netip.Prefix) (bool, error) {
	found := false
	err := r.do(unix.RTM_GETADDR, unix.NLM_F_REQUEST|unix.NLM_F_DUMP, ifaddrmsg(unix.AF_UNSPEC, 0, 0), func(m []byte) {
		if len(m) < unix.SizeofIfAddrmsg || m[0] != unix.AF_INET || int(binary.NativeEndian.Uint32(m[4:8])) != ifindex {
			return
		}
		for t, v := range attrs(m[unix.SizeofIfAddrmsg:]) {
			if a, ok := netip.AddrFromSlice(v); ok && t == unix.IFA_ADDRESS && a.Unmap() == p.Addr() {
				found = true
			}
		}
	})
	if err != nil {
		return false, fmt.Errorf("vip: list addresses: %w", err)
	}
	return found, nil
}

func (r *rtnl) Add(ifindex int, p netip.Prefix) error {
	err := r.do(unix.RTM_NEWADDR, unix.NLM_F_REQUEST|unix.NLM_F_ACK|unix.NLM_F_CREATE|unix.NLM_F_EXCL, addressBody(ifindex, p), nil)
	if errors.Is(err, syscall.EEXIST) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("vip: add %s: %w", p, err)
	}
	return nil
}

func (r *rtnl) Del(ifindex int, p netip.Prefix) error {
	err := r.do(unix.RTM_DELADDR, unix.NLM_F_REQUEST|unix.NLM_F_ACK, addressBody(ifindex, p), nil)
	if errors.Is(err, syscall.EADDRNOTAVAIL) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("vip: remove %s: %w", p, err)
	}
	return nil
}

func (r *rtnl) Close() error { return unix.Close(r.fd) }

// ifaddrmsg is struct ifaddrmsg: family, prefix length, flags, scope, interface index.
func ifaddrmsg(family, bits, scope uint8, ifindex ...uint32) []byte {
	b := []byte{family, bits, 0, scope, 0, 0, 0, 0}
	if len(ifindex) > 0 {
		binary.NativeEndian.PutUint32(b[4:], ifindex[0])
	}
	return b
}

// addressBody is the ifaddrmsg and attributes of p on ifindex, byte for byte what rtnetlink's
// AddressMessage with Address, Local, Broadcast (below /31) encoded (TestAddressBodyMatchesRtnetlink).
func addressBody(ifindex int, p netip.Prefix) []byte {
	ip := p.Addr().AsSlice()
	b := ifaddrmsg(unix.AF_INET, uint8(p.Bits()), unix.RT_SCOPE_UNIVERSE, uint32(ifindex))
	b = attr(b, unix.IFA_UNSPEC, []byte{0, 0})
	b = attr(b, unix.IFA_ADDRESS, ip)
	b = attr(b, unix.IFA_LOCAL, ip)
	if p.Bits() < 31 {
		brd := binary.BigEndian.Uint32(ip) | ^uint32(0)>>p.Bits()
		b = attr(b, unix.IFA_BROADCAST, binary.BigEndian.AppendUint32(nil, brd))
	}
	return attr(b, unix.IFA_FLAGS, binary.NativeEndian.AppendUint32(nil, 0))
}

// attr appends one netlink attribute (length, type, value, padding to 4 bytes).
func attr(b []byte, typ uint16, v []byte) []byte {
	b = binary.NativeEndian.AppendUint16(b, uint16(unix.SizeofNlAttr+len(v)))
	b = binary.NativeEndian.AppendUint16(b, typ)
	b = append(b, v...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// attrs yields the attributes in b; a malformed one ends the list.
func attrs(b []byte) func(yield func(uint16, []byte) bool) {
	return func(yield func(uint16, []byte) bool) {
		for len(b) >= unix.SizeofNlAttr {
			l := int(binary.NativeEndian.Uint16(b))
			if l < unix.SizeofNlAttr || l > len(b) {
				return
			}
			if !yield(binary.NativeEndian.Uint16(b[2:])&^unix.NLA_F_NESTED, b[unix.SizeofNlAttr:l]) {
				return
			}
			b = b[min((l+3)&^3, len(b)):]
		}
	}
}

// do sends one request and reads its replies: each message of a dump goes to each (without its
// header), an error or acknowledgement ends it (a kernel error is returned as its errno).
func (r *rtnl) do(typ uint16, flags uint16, body []byte, each func([]byte)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	req := binary.NativeEndian.AppendUint32(nil, uint32(unix.SizeofNlMsghdr+len(body)))
	req = binary.NativeEndian.AppendUint16(req, typ)
	req = binary.NativeEndian.AppendUint16(req, flags)
	req = binary.NativeEndian.AppendUint32(req, r.seq)
	req = binary.NativeEndian.AppendUint32(req, 0)
	req = append(req, body...)
	if err := unix.Sendto(r.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return err
	}
	buf := make([]byte, 32<<10)
	for {
		n, _, err := unix.Recvfrom(r.fd, buf, 0)
		if err != nil {
			return err
		}
		for b := buf[:n]; len(b) >= unix.SizeofNlMsghdr; {
			l := int(binary.NativeEndian.Uint32(b))
			if l < unix.SizeofNlMsghdr || l > len(b) {
				return errors.New("netlink: malformed reply")
			}
			t, seq, m := binary.NativeEndian.Uint16(b[4:]), binary.NativeEndian.Uint32(b[8:]), b[unix.SizeofNlMsghdr:l]
			b = b[min((l+3)&^3, len(b)):]
			if seq != r.seq {
				continue // a reply to an earlier request that gave up
			}
			switch t {
			case unix.NLMSG_DONE:
				return nil
			case unix.NLMSG_ERROR:
				if len(m) < 4 {
					return errors.New("netlink: short error reply")
				}
				if code := int32(binary.NativeEndian.Uint32(m)); code != 0 {
					return syscall.Errno(-code)
				}
				return nil // the acknowledgement
			default:
				if each != nil {
					each(m)
				}
			}
		}
	}
}
