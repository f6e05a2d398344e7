//go:build !linux

package vip

import (
	"errors"
	"net"
	"net/netip"
)

var errNotLinux = errors.New("vip: a virtual IP needs Linux (netlink)")

func dialNetlink() (Addrs, error)                    { return nil, errNotLinux }
func gratuitousARP(*net.Interface, netip.Addr) error { return errNotLinux }
func checkCaps() error                               { return errNotLinux }
