package vip

import (
	"bytes"
	"net"
	"net/netip"
	"runtime"
	"testing"

	"github.com/jsimonetti/rtnetlink/v2"
	"golang.org/x/sys/unix"
)

// The hand-written request is what jsimonetti/rtnetlink sent (vip used it before its requests were written by hand).
func TestAddressBodyMatchesRtnetlink(t *testing.T) {
	for _, p := range []string{"10.9.0.50/24", "192.168.1.7/31", "10.0.0.1/32", "172.16.5.4/12"} {
		pf := netip.MustParsePrefix(p)
		ip := net.IP(pf.Addr().AsSlice())
		attrs := &rtnetlink.AddressAttributes{Address: ip, Local: ip}
		if pf.Bits() < 31 {
			brd := net.IP(pf.Addr().AsSlice())
			mask := net.CIDRMask(pf.Bits(), 32)
			for i := range brd {
				brd[i] |= ^mask[i]
			}
			attrs.Broadcast = brd
		}
		want, err := (&rtnetlink.AddressMessage{Family: unix.AF_INET, PrefixLength: uint8(pf.Bits()), Scope: unix.RT_SCOPE_UNIVERSE,
			Index: 7, Attributes: attrs}).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if got := addressBody(7, pf); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got % x\nwant % x", p, got, want)
		}
	}
}

// Add, Has and Del against the kernel, in a network namespace of the test's own (root only).
func TestNetlinkInOwnNamespace(t *testing.T) {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine, namespace and all
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			done <- err
			return
		}
		done <- exerciseNetlink(t)
	}()
	if err := <-done; err == unix.EPERM {
		t.Skip("needs root (unshare CLONE_NEWNET)")
	} else if err != nil {
		t.Fatal(err)
	}
}

func exerciseNetlink(t *testing.T) error {
	a, err := dialNetlink()
	if err != nil {
		return err
	}
	defer a.Close()
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		return err
	}
	p := netip.MustParsePrefix("10.9.0.50/24")
	if has, err := a.Has(lo.Index, p); err != nil || has {
		t.Errorf("before Add: has %v, %v", has, err)
	}
	for range 2 { // the second Add finds it there: no error
		if err := a.Add(lo.Index, p); err != nil {
			t.Errorf("Add: %v", err)
		}
	}
	if has, err := a.Has(lo.Index, p); err != nil || !has {
		t.Errorf("after Add: has %v, %v", has, err)
	}
	if has, _ := a.Has(lo.Index+100, p); has {
		t.Error("found on another interface")
	}
	for range 2 { // the second Del finds it gone: no error
		if err := a.Del(lo.Index, p); err != nil {
			t.Errorf("Del: %v", err)
		}
	}
	if has, err := a.Has(lo.Index, p); err != nil || has {
		t.Errorf("after Del: has %v, %v", has, err)
	}
	if err := a.Add(lo.Index+100, p); err == nil {
		t.Error("Add on a missing interface: no error")
	}
	return nil
}
