//go:build linux && !lite

package clientrtt

import (
	"encoding/binary"
	"net"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Supported: this kernel gives TCP_INFO.
const Supported = true

// RTT is the kernel's smoothed round trip of c (TCP_INFO's tcpi_rtt, in
// µs; from the handshake on, for an accepted connection); ok false when c
// is not a TCP socket or the kernel has no sample yet. It reads
// unix.TCPInfo's layout into a byte buffer: unix.GetsockoptTCPInfo's
// heap copy would bring its type's equality function (1.4 KB of code in a
// build with 5 KB to spare, docs/NOTES.md "003's scheme 3 on real
// boards").
func RTT(c net.Conn) (time.Duration, bool) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return 0, false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return 0, false
	}
	var info [unsafe.Sizeof(unix.TCPInfo{})]byte
	var us uint32
	err = raw.Control(func(fd uintptr) {
		n := uint32(len(info))
		_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, fd, unix.IPPROTO_TCP, unix.TCP_INFO, uintptr(unsafe.Pointer(&info[0])), uintptr(unsafe.Pointer(&n)), 0)
		if off := unsafe.Offsetof(unix.TCPInfo{}.Rtt); e == 0 && uintptr(n) >= off+4 {
			us = binary.NativeEndian.Uint32(info[off:])
		}
	})
	if err != nil || us == 0 {
		return 0, false
	}
	return time.Duration(us) * time.Microsecond, true
}
