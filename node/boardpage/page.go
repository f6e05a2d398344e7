// Package boardpage is GET /api/board: this board alone as its page shows it (build, process, memory, load, upgrades, the kept stores it could not read), and the log stream's hub.
package boardpage

import (
	"log/slog"
	"net"
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
	// Problems: kept stores this board could not read at start (problems.go)
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

// Options are what the page shows of the board; none of them is the Node.
type Options struct {
	Name, Gossip string
	Started      time.Time
	Exe          string          // the running binary; "" when unknown
	Addr         func() net.Addr // the listener; nil before it listens
	Advertise    func() string   // what other boards dial
	Load         func() state.Load
	Runstate     func() state.Runstate
	Master       func() string
	Devices      func() []hal.Snapshot
	Restart      func() string // how a restart happens: exec, systemd, supervisor
	History      func() *history.Status
	Problems     *Problems
	CA           string // the cluster CA's fingerprint; "" with TLS off
	// Allowed reports whether r carries credentials: without, the page
	// leaves out what tells an attacker which binary runs (anonymous).
	Allowed func(r *http.Request) bool
	Read    func(http.Handler) http.Handler // [http] read_auth
}

// Page is the board page's data.
type Page struct {
	o   Options
	sum exeSum
}

// New makes the page.
func New(o Options) *Page { return &Page{o: o} }

// Routes mounts GET /api/board.
func (p *Page) Routes(mux *http.ServeMux) {
	mux.Handle("GET /api/board", p.o.Read(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := p.Info()
		if !p.o.Allowed(r) {
			b = b.anonymous()
		}
		httpx.JSON(w, http.StatusOK, b)
	})))
}

// anonymous is b without what tells an attacker which binary runs and
// as which process (version, commit, Go version, PID, SHA-256 and the
// upgrades'): a client without credentials gets the rest.
func (b BoardInfo) anonymous() BoardInfo {
	b.PID, b.Version, b.Commit, b.GoVersion, b.SHA256 = 0, "", "", "", ""
	b.Upgrade, b.Pending, b.Problems = nil, nil, nil
	return b
}

// Info is the page now, with everything.
func (p *Page) Info() BoardInfo {
	o := p.o
	b := BoardInfo{
		Name:      o.Name,
		Gossip:    o.Gossip,
		Advertise: o.Advertise(),
		PID:       os.Getpid(),
		Started:   o.Started,
		UptimeS:   time.Since(o.Started).Seconds(),
		Version:   buildinfo.Version,
		Commit:    buildinfo.Commit,
		GoVersion: runtime.Version(),
		Arch:      runtime.GOOS + "/" + runtime.GOARCH,
		GOARM:     buildinfo.GOARM(),
		SHA256:    p.sum.get(o.Exe),
		Memory:    memory(),
		Load:      o.Load(),
		Runstate:  o.Runstate(),
		Master:    o.Master(),
		Devices:   o.Devices(),
		Restart:   o.Restart(),
		History:   o.History(), // device history
		Problems:  o.Problems.List(),
		CASHA256:  o.CA,
	}
	if a := o.Addr(); a != nil {
		b.HTTP = a.String()
	}
	if o.Exe != "" {
		if res, ok := firmware.Last(o.Exe); ok {
			b.Upgrade = &res
		}
		if m, ok := firmware.Pending(o.Exe); ok {
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

// Logs makes the log stream's hub: the ring's lines on connect, then
// each new one. Its own logger bypasses the ring (a drop warning must not
// feed the stream it is about). What it holds is handed to onClose.
func Logs(ring *logring.Ring, onClose func(func())) *events.Hub {
	inner := slog.New(slog.DiscardHandler)
	if ring != nil && ring.Inner() != nil {
		inner = slog.New(ring.Inner())
	}
	hub := events.New(events.Options{Logger: inner, Buffer: 256})
	onClose(hub.Close)
	if ring == nil {
		hub.Snapshot("log", func() any { return []logring.Line{} })
		return hub
	}
	hub.Snapshot("log", func() any { return ring.Lines() })
	ring.OnLine(func(l logring.Line) { hub.Publish("log", []logring.Line{l}) })
	onClose(func() { ring.OnLine(nil) })
	return hub
}
