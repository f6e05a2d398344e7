package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/firstrun"
)

// firstRunAddr is where a board without a config serves its first-run
// page: the address its boot config then gets ([node] http's default).
// firstRunTLS is where the page is served over TLS ([http] https's default);
// the plain port then only redirects there.
const (
	firstRunAddr = ":8080"
	firstRunTLS  = ":8443"
)

// firstRun serves the first-run page (node/firstrun, docs/DESIGN.md "First
// run") until the person holding the claim code starts the board, and
// answers the boot config it wrote; a signal ends it with an error.
func firstRun(log *slog.Logger, stderr io.Writer) (string, error) {
	ln, err := net.Listen("tcp", firstRunAddr)
	if err != nil {
		return "", err
	}
	opts := firstrun.Options{Logger: log, HTTP: firstRunAddr, ClaimDir: bootDir(config.SearchPaths)}
	tlsLn, err := net.Listen("tcp", firstRunTLS)
	if err != nil {
		log.Warn("firstrun: no HTTPS for the first-run page: the claim code and the bundles cross the LAN in clear", "https", firstRunTLS, "err", err)
	} else {
		opts.HTTPS = firstRunTLS
	}
	s, err := firstrun.New(opts)
	if err != nil {
		ln.Close()
		if tlsLn != nil {
			tlsLn.Close()
		}
		return "", err
	}
	mk := func() *http.Server {
		return &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second, ReadTimeout: 30 * time.Second}
	}
	srv := mk()
	go func() { _ = srv.Serve(ln) }()
	var tlsSrv *http.Server
	if tlsLn != nil {
		tlsSrv = mk()
		go func() { _ = tlsSrv.Serve(tls.NewListener(tlsLn, s.TLSConfig())) }()
	}
	log.Warn("no boot config: serving the first-run page; open it with the claim code to start a new cluster or join one", "http", ln.Addr().String(), "url", s.URL())
	fmt.Fprintf(stderr, "ews: first run: claim code %s (also in %s until the board is set up)\n", s.Claim(), s.ClaimPath())
	if fp := s.Fingerprint(); fp != "" {
		fmt.Fprintf(stderr, "ews: first run: open %s and check that the browser shows the certificate SHA-256 fingerprint %s\n", s.URL(), fp)
	} else {
		fmt.Fprintf(stderr, "ews: first run: open %s (plain HTTP: anyone on the LAN can read what you type)\n", s.URL())
	}
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
	if tlsSrv != nil {
		_ = tlsSrv.Shutdown(ctx)
	}
	return path, err
}

// bootDir is where the claim file goes: the directory of the first boot
// config search path on the boot partition (under /boot: /boot/firmware or
// /boot) that exists; "" (firstrun's Dir, /etc/ews) when none does.
func bootDir(searchPaths []string) string {
	for _, p := range searchPaths {
		d := filepath.Dir(p)
		if d != "/boot" && !strings.HasPrefix(d, "/boot/") {
			continue
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	return ""
}
