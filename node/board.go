package node

import (
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/buildinfo"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/events"
	"github.com/ews-firmware/ews/node/firmware"
	"github.com/ews-firmware/ews/node/history"
	"github.com/ews-firmware/ews/node/logring"
	"github.com/ews-firmware/ews/state"
	"github.com/prometheus/procfs"
)

// BoardInfo is GET /api/board: this board alone, as its page shows it.
type BoardInfo struct {
	Name      string           `json:"name"`
	HTTP      string           `json:"http"`      // the listener
	Gossip    string           `json:"gossip"`    // node.gossip
	Advertise string           `json:"advertise"` // what other boards dial
	PID       int              `json:"pid"`
	Started   time.Time        `json:"started"`
	UptimeS   float64          `json:"uptime_s"`
	Version   string           `json:"version"`
	Commit    string           `json:"commit"`
	GoVersion string           `json:"go_version"`
	Arch      string           `json:"arch"` // GOOS/GOARCH
	GOARM     string           `json:"goarm,omitempty"`
	SHA256    string           `json:"sha256,omitempty"` // of the running executable
	Memory    BoardMemory      `json:"memory"`
	Load      state.Load       `json:"load"`
	Runstate  state.Runstate   `json:"runstate"`
	Master    string           `json:"master"`
	Devices   []hal.Snapshot   `json:"devices"`
	Restart   string           `json:"restart"` // how a restart happens: exec, systemd, supervisor
	Upgrade   *firmware.Result `json:"last_upgrade,omitempty"`
	Pending   *firmware.Marker `json:"upgrade_pending,omitempty"`
	History   *history.Status  `json:"history,omitempty"` // device history (docs/NOTES.md "Device history")
	// Problems: kept stores this board could not read at start (keptstores.go)
	Problems []StoreProblem `json:"problems,omitempty"`
	// CASHA256 is the cluster CA's fingerprint (GET /api/cluster/ca): what
	// a person compares after importing it; absent with TLS off.
	CASHA256 string `json:"ca_sha256,omitempty"`
}

// BoardMemory is from /proc/meminfo and the Go runtime, in bytes.
type BoardMemory struct {
	TotalBytes     uint64 `json:"total_bytes"`
	AvailableBytes uint64 `json:"available_bytes"`
	FreeBytes      uint64 `json:"free_bytes"`
	ProcessBytes   uint64 `json:"process_bytes"` // the Go runtime's memory from the OS
}

// binary is the running executable: its path (WithExecutable) and its
// hash for the board page (node/firmware's Upload replaces it).
type binary struct {
	path string // "" when unknown: uploads are refused
	sum  exeSum
}

// exeSum hashes the running binary once (13 MB: ~0.3 s on a Pi Zero).
type exeSum struct {
	once sync.Once
	sum  string
}

func (e *exeSum) get(path string) string {
	e.once.Do(func() {
		if path == "" {
			return
		}
		e.sum, _ = firmware.SHA256File(path)
	})
	return e.sum
}

func (n *Node) serveBoard(w http.ResponseWriter, r *http.Request) {
	b := n.boardInfo()
	if !n.acc.auth.Allowed(r) {
		b = b.anonymous()
	}
	httpx.JSON(w, http.StatusOK, b)
}

// anonymous is b without what tells an attacker which binary runs and
// as which process (version, commit, Go version, PID, SHA-256 and the
// upgrades'): a client without credentials gets the rest.
func (b BoardInfo) anonymous() BoardInfo {
	b.PID, b.Version, b.Commit, b.GoVersion, b.SHA256 = 0, "", "", "", ""
	b.Upgrade, b.Pending, b.Problems = nil, nil, nil
	return b
}

func (n *Node) boardInfo() BoardInfo {
	v := n.clu.cluster.Snapshot()
	b := BoardInfo{
		Name:      n.boot.State.Name,
		Gossip:    n.boot.State.Gossip,
		Advertise: n.clu.local.HTTPAddr(),
		PID:       os.Getpid(),
		Started:   n.started,
		UptimeS:   time.Since(n.started).Seconds(),
		Version:   buildinfo.Version,
		Commit:    buildinfo.Commit,
		GoVersion: runtime.Version(),
		Arch:      runtime.GOOS + "/" + runtime.GOARCH,
		GOARM:     buildinfo.GOARM(),
		SHA256:    n.bin.sum.get(n.bin.path),
		Memory:    memory(),
		Load:      n.clu.load.Load(),
		Runstate:  n.clu.local.Runstate(),
		Master:    v.Master,
		Devices:   n.dev.devs.Local(),
		Restart:   n.restartMode(),
		History:   n.dev.hist.Status(), // device history
		Problems:  n.kept.list(),
		CASHA256:  n.sec.ca.Fingerprint(),
	}
	if a := n.Addr(); a != nil {
		b.HTTP = a.String()
	}
	if n.bin.path != "" {
		if res, ok := firmware.Last(n.bin.path); ok {
			b.Upgrade = &res
		}
		if m, ok := firmware.Pending(n.bin.path); ok {
			b.Pending = &m
		}
	}
	return b
}

func memory() BoardMemory {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := BoardMemory{ProcessBytes: ms.Sys}
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return m
	}
	mi, err := fs.Meminfo()
	if err != nil {
		return m
	}
	if mi.MemTotalBytes != nil {
		m.TotalBytes = *mi.MemTotalBytes
	}
	if mi.MemAvailableBytes != nil {
		m.AvailableBytes = *mi.MemAvailableBytes
	}
	if mi.MemFreeBytes != nil {
		m.FreeBytes = *mi.MemFreeBytes
	}
	return m
}

// Executable is the running binary with symlinks resolved, "" when unknown:
// what `ews run` passes to WithExecutable.
func Executable() string {
	p, err := os.Executable()
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// openLogs makes the log stream's hub: the ring's lines on connect, then
// each new one. Its own logger bypasses the ring (a drop warning must not
// feed the stream it is about).
func openLogs(ring *logring.Ring, life *lifecycle) *events.Hub {
	inner := slog.New(slog.DiscardHandler)
	if ring != nil && ring.Inner() != nil {
		inner = slog.New(ring.Inner())
	}
	hub := events.New(events.Options{Logger: inner, Buffer: 256})
	life.onClose(hub.Close)
	if ring == nil {
		hub.Snapshot("log", func() any { return []logring.Line{} })
		return hub
	}
	hub.Snapshot("log", func() any { return ring.Lines() })
	ring.OnLine(func(l logring.Line) { hub.Publish("log", []logring.Line{l}) })
	life.onClose(func() { ring.OnLine(nil) })
	return hub
}
