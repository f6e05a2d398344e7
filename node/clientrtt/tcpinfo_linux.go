//go:build linux

package clientrtt

import (
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Supported: this kernel gives TCP_INFO.
const Supported = true

// RTT is the kernel's smoothed round trip of c (TCP_INFO's tcpi_rtt, in
// µs; from the handshake on, for an accepted connection); ok false when c
// is not a TCP socket or the kernel has no sample yet.
func RTT(c net.Conn) (time.Duration, bool) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var info *unix.TCPInfo
	var ierr error
	if err := raw.Control(func(fd uintptr) { info, ierr = unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO) }); err != nil || ierr != nil || info.Rtt == 0 {
		return 0, false
	}
	return time.Duration(info.Rtt) * time.Microsecond, true
}
