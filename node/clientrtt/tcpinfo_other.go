//go:build !linux || lite

package clientrtt

import (
	"net"
	"time"
)

// Supported: this kernel gives TCP_INFO (not here, nor in the lite build:
// nothing is measured).
const Supported = false

// RTT is never known here.
func RTT(net.Conn) (time.Duration, bool) { return 0, false }
