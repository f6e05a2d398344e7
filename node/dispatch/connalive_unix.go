//go:build unix

package dispatch

import "syscall"

// alive reports whether an idle connection is still open: its receive
// queue is empty. A board that closed it has left a FIN there (a read of
// zero), a TLS close alert, or a reset; nothing else arrives on an idle
// HTTP/1.1 connection. One non-blocking peek, no goroutine.
func (bc *boardConn) alive() bool {
	if bc.raw == nil {
		return true
	}
	var b [1]byte
	open := false
	err := bc.raw.Read(func(fd uintptr) bool {
		_, _, rerr := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		open = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
		return true
	})
	return err == nil && open
}
