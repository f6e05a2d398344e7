//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package mdns

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// reuse lets the responder share 5353 with avahi or mDNSResponder (and
// with other boards on one host): every socket bound with SO_REUSEPORT
// gets each multicast datagram.
func reuse(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		if serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEADDR, 1); serr != nil {
			return
		}
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	})
	if err != nil {
		return err
	}
	return serr
}
