//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package mdns

import "syscall"

// reuse does nothing here: the responder owns 5353 alone.
func reuse(_, _ string, _ syscall.RawConn) error { return nil }
