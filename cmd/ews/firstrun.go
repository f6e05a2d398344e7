package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ews-firmware/ews/node/firstrun"
)

// firstRunAddr is where a board without a config serves its first-run
// page: the address its boot config then gets ([node] http's default).
const firstRunAddr = ":8080"

// firstRun serves the first-run page (node/firstrun, docs/NOTES.md "Web
// UI") until the admin starts the board, and answers the boot config it
// wrote; a signal ends it with an error.
func firstRun(log *slog.Logger) (string, error) {
	s := firstrun.New(firstrun.Options{Logger: log, HTTP: firstRunAddr})
	ln, err := net.Listen("tcp", firstRunAddr)
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Warn("no boot config: serving the first-run page; open it to start a new cluster or join one", "http", ln.Addr().String())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var path string
	select {
	case path = <-s.Done():
	case <-sigs:
		err = errors.New("stopped before the board was set up")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = srv.Shutdown(ctx)
	return path, err
}
