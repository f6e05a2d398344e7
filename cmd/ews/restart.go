package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/ews-firmware/ews/node"
	"github.com/ews-firmware/ews/node/firmware"
)

// comeBack starts ews again after a restart or upgrade asked for over
// HTTP. Under the upgrade supervisor or systemd: exit ExitCodeRestart and
// let them start it. A plain restart otherwise replaces this process in
// place (exec, same PID). An upgrade becomes the supervisor of the new
// binary: this old code rolls it back if it does not serve in time.
func comeBack(e node.Exit, exe, httpAddr, handoff string, sigs <-chan os.Signal, log *slog.Logger, stderr io.Writer) int {
	env := os.Environ()
	if handoff != "" {
		env = append(env, handoff) // the next process keeps this board's sessions
	}
	if e == node.ExitStop {
		return exitOK
	}
	if os.Getenv(node.EnvSupervised) == "1" {
		return node.ExitCodeRestart
	}
	if e == node.ExitRestart {
		if os.Getenv("INVOCATION_ID") != "" || os.Getenv("NOTIFY_SOCKET") != "" {
			return node.ExitCodeRestart // Restart=on-failure
		}
		log.Info("restarting in place", "exe", exe)
		err := syscall.Exec(exe, os.Args, env)
		fmt.Fprintf(stderr, "ews run: restart: exec %s: %v\n", exe, err)
		return node.ExitCodeRestart
	}
	return superviseUpgrade(exe, httpAddr, env, sigs, log, stderr)
}

// superviseUpgrade runs the binary at exe as a supervised child until it
// exits for good, rolling a pending upgrade back unless it serves in time.
// sigs nil: it listens for SIGINT/SIGTERM itself.
func superviseUpgrade(exe, httpAddr string, env []string, sigs <-chan os.Signal, log *slog.Logger, stderr io.Writer) int {
	if sigs == nil {
		c := make(chan os.Signal, 2)
		signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
		defer signal.Stop(c)
		sigs = c
	}
	sup := &firmware.Supervisor{
		Exe: exe, Args: os.Args[1:], Env: env, EnvKey: node.EnvSupervised,
		RestartCode: node.ExitCodeRestart, Default: node.ReadyWithin,
		Ready: readyProbe(httpAddr), Signals: sigs,
		Stdout: os.Stdout, Stderr: stderr, Log: log,
	}
	return sup.Run(context.Background())
}

// readyProbe asks the board's own /readyz on loopback.
func readyProbe(httpAddr string) func(ctx context.Context) bool {
	host, port, err := net.SplitHostPort(httpAddr)
	if err != nil {
		return func(context.Context) bool { return false }
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	url := "http://" + net.JoinHostPort(host, port) + "/readyz"
	client := &http.Client{Timeout: 2 * time.Second}
	return func(ctx context.Context) bool {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false
		}
		resp, err := client.Do(req)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}
}
