//go:build ewsprofile

package main

import (
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof" // the profiling build only: go build -tags ewsprofile
	"os"
)

// A profiling build (never shipped) serves net/http/pprof on $EWS_PPROF, for the master's
// CPU profile under the paper harness's load.
func init() {
	addr := os.Getenv("EWS_PPROF")
	if addr == "" {
		return
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return // another board of the same machine has it
	}
	slog.Info("ews: pprof", "addr", ln.Addr().String())
	go http.Serve(ln, nil)
}
