// Package buildinfo holds the version stamped into the binary by the Makefile's -ldflags.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"time"
)

// Set with -ldflags "-X github.com/ews-firmware/ews/internal/buildinfo.Version=... -X ...Commit=...".
var (
	Version = "dev"
	Commit  = "unknown"
)

// GOARM returns the ARM variant the binary was built for ("6", "7"; "" off 32-bit ARM).
func GOARM() string {
	if runtime.GOARCH != "arm" {
		return ""
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "GOARM" {
				return s.Value
			}
		}
	}
	return ""
}

// String is the one-line `ews version` output.
func String() string {
	arch := runtime.GOOS + "/" + runtime.GOARCH
	if v := GOARM(); v != "" {
		arch += " GOARM=" + v
	}
	if Lite {
		arch += ", lite build"
	}
	return fmt.Sprintf("ews %s (commit %s, %s, %s)", Version, Commit, runtime.Version(), arch)
}

// Time is the commit time of the source this binary was built from (Go's
// vcs.time); zero when not stamped (go test, a build outside git). No
// true time is earlier: a board whose clock is knows it is wrong.
func Time() time.Time {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.time" {
				t, _ := time.Parse(time.RFC3339, s.Value)
				return t
			}
		}
	}
	return time.Time{}
}
