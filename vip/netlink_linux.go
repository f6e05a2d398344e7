package vip

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"

	"github.com/jsimonetti/rtnetlink/v2"
	"golang.org/x/sys/unix"
)

// rtnl is Addrs over a route netlink socket.
type rtnl struct{ c *rtnetlink.Conn }

func dialNetlink() (Addrs, error) {
	c, err := rtnetlink.Dial(nil)
	if err != nil {
		return nil, fmt.Errorf("vip: open netlink socket: %w", err)
	}
	return rtnl{c}, nil
}

func (r rtnl) Has(ifindex int, p netip.Prefix) (bool, error) {
	msgs, err := r.c.Address.List()
	if err != nil {
		return false, fmt.Errorf("vip: list addresses: %w", err)
	}
	for _, m := range msgs {
		if int(m.Index) != ifindex || m.Family != unix.AF_INET || m.Attributes == nil {
			continue
		}
		a, ok := netip.AddrFromSlice(m.Attributes.Address)
		if ok && a.Unmap() == p.Addr() {
			return true, nil
		}
	}
	return false, nil
}

func (r rtnl) Add(ifindex int, p netip.Prefix) error {
	err := r.c.Address.New(message(ifindex, p))
	if errors.Is(err, syscall.EEXIST) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("vip: add %s: %w", p, err)
	}
	return nil
}

func (r rtnl) Del(ifindex int, p netip.Prefix) error {
	err := r.c.Address.Delete(message(ifindex, p))
	if errors.Is(err, syscall.EADDRNOTAVAIL) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("vip: remove %s: %w", p, err)
	}
	return nil
}

func (r rtnl) Close() error { return r.c.Close() }

func message(ifindex int, p netip.Prefix) *rtnetlink.AddressMessage {
	ip := net.IP(p.Addr().AsSlice())
	bits := p.Bits()
	brd := net.IP(p.Addr().AsSlice())
	mask := net.CIDRMask(bits, 32)
	for i := range brd {
		brd[i] |= ^mask[i]
	}
	attrs := &rtnetlink.AddressAttributes{Address: ip, Local: ip}
	if bits < 31 {
		attrs.Broadcast = brd
	}
	return &rtnetlink.AddressMessage{
		Family:       unix.AF_INET,
		PrefixLength: uint8(bits),
		Scope:        unix.RT_SCOPE_UNIVERSE,
		Index:        uint32(ifindex),
		Attributes:   attrs,
	}
}
