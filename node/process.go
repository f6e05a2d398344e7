package node

import (
	"errors"
	"os"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/node/firmware"
)

// Exit says why Run returned: a signal (ExitStop) or a request to restart
// this board, with (ExitUpgrade) or without (ExitRestart) a new binary.
type Exit int

// Why Run returned.
const (
	ExitStop Exit = iota
	ExitRestart
	ExitUpgrade
)

func (e Exit) String() string {
	switch e {
	case ExitRestart:
		return "restart"
	case ExitUpgrade:
		return "upgrade"
	}
	return "stop"
}

// EnvSupervised is set in the environment of an ews run started by the
// upgrade supervisor (cmd/ews): such a board restarts by exiting with
// ExitCodeRestart, and its supervisor starts it again.
const EnvSupervised = "EWS_SUPERVISED"

// ExitCodeRestart is the exit status that asks whoever started ews
// (systemd's Restart=on-failure, the upgrade supervisor) to start it again.
const ExitCodeRestart = 75

// exitRequest is how a handler stops Run: the first reason wins.
type exitRequest struct {
	code atomic.Int32  // an Exit
	stop chan struct{} // closed by requestExit
}

// Exit is why Run returned (valid once it has).
func (n *Node) Exit() Exit { return Exit(n.exit.code.Load()) }

// requestExit stops Run gracefully, like SIGTERM, with reason e; false
// when a restart or upgrade is already under way.
func (n *Node) requestExit(e Exit) bool {
	if !n.exit.code.CompareAndSwap(int32(ExitStop), int32(e)) {
		return false
	}
	close(n.exit.stop)
	return true
}

// restartMode is how this board comes back after a restart: systemd
// restarts it (Restart=on-failure), the upgrade supervisor does, or it
// replaces itself in place (exec, same PID).
func restartMode() string {
	switch {
	case os.Getenv(EnvSupervised) == "1":
		return "supervisor"
	case os.Getenv("INVOCATION_ID") != "" || os.Getenv("NOTIFY_SOCKET") != "":
		return "systemd"
	}
	return "exec"
}

// StepClock sets this board's [sim] clock_offset while it runs: its wall
// clock jumps, as a board's does when its RTC is set by hand (`ews run`
// does it on SIGUSR1, from the config file read again). Only a board with
// a [sim] section has an offset to step; any other refuses, so a real
// board's clock is never moved this way.
func (n *Node) StepClock(offset time.Duration) error {
	if n.boot.Sim == nil {
		return errors.New("node: the clock steps only on a simulated board ([sim] clock_offset)")
	}
	old := n.boot.Clock.Offset()
	n.boot.Clock.SetOffset(offset)
	n.log.Warn("clock: stepped while running ([sim] clock_offset read again)", "from", old.String(), "to", offset.String())
	return nil
}

// SessionHandoff is the environment entry ("EWS_SESSION_SECRET=...") that
// keeps this board's sessions valid across a restart it starts itself; ""
// when its session key comes from the bundle or the cluster key (stable
// already). A restart by systemd starts without it: sessions of a
// standalone board without a bundle end then.
func (n *Node) SessionHandoff() string { return n.sec.HandoffEnv() }

// Firmware upload limits (node/firmware's Upload serves the upload).
const (
	MaxFirmwareBytes = firmware.MaxBytes // a static ews is ~14 MB
	ReadyWithin      = 60 * time.Second  // the new binary must serve within this, else it is rolled back
	// HeaderFirmwareSHA256 carries the SHA-256 (hex) the user confirmed.
	HeaderFirmwareSHA256 = firmware.HeaderSHA256
)
