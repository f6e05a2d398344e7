//go:build unix

package dispatch

import "syscall"

// alive reports whether an idle connection is still open: its receive
// queue is empty. A board that closed it has left a FIN there (a read of
// zero), a TLS close alert, or a reset; nothing else arrives on an idle
// HTTP/1.1 connection. One non-blocking peek, no goroutine, no allocation
// (peekFn is bound once per connection).
func (bc *boardConn) alive() bool {
	if bc.raw == nil {
		return true
	}
	bc.peekOpen = false
	err := bc.raw.Read(bc.peekFn)
	return err == nil && bc.peekOpen
}

// peek is alive's one look at the socket's receive queue.
func (bc *boardConn) peek(fd uintptr) bool {
	_, _, rerr := syscall.Recvfrom(int(fd), bc.peekBuf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	bc.peekOpen = rerr == syscall.EAGAIN || rerr == syscall.EWOULDBLOCK
	return true
}
