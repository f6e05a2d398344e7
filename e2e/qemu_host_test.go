package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// qhTarget is one 32-bit ARM build and the CPU qemu-user emulates for it.
type qhTarget struct {
	name    string // the build's name in dist/: ews-linux-<name>
	goarm   string
	cpu     string // qemu's -cpu; "" for its default (every instruction it knows)
	board   string // [node] board
	measure bool   // run only for figures (EWS_MEASURE=1), not a check the test command needs
}

// qhTargets: the armv7 build as the README tells a new user to try it, and
// the armv5 build on the papers' XScale PXA255 (no VFP, ARMv5TE). The
// armv6 build on a Pi Zero/1's ARM1176 runs for the RSS figures only.
var qhTargets = []qhTarget{
	{name: "armv7", goarm: "7", board: "auto"},
	{name: "armv5", goarm: "5", cpu: "pxa255", board: "host"},
	{name: "armv6", goarm: "6", cpu: "arm1176", board: "auto", measure: true},
}

// TestQemuHostCluster runs three host boards (no [sim], no devices) of each
// 32-bit ARM build under qemu-arm-static on loopback: they agree on a master
// with every board running (under qemu-user the host's x86 /proc/cpuinfo
// shows through, which procfs's ARM parser panics on: that figure must cost
// nothing but itself), a CGI program runs through the master, and after
// kill -9 of the master a peer takes over and the CGI program runs again,
// entering at a follower.
func TestQemuHostCluster(t *testing.T) {
	long(t, "builds ARM binaries and emulates three boards of each")
	qemu, err := exec.LookPath("qemu-arm-static")
	if err != nil {
		t.Skip("qemu-arm-static missing (scripts/test.sh installs qemu-user-static)")
	}
	for _, tg := range qhTargets {
		t.Run(tg.name, func(t *testing.T) {
			if tg.measure && os.Getenv("EWS_MEASURE") == "" {
				t.Skip("figures only: set EWS_MEASURE=1")
			}
			qhCluster(t, qemu, tg)
		})
	}
}

func qhCluster(t *testing.T, qemu string, tg qhTarget) {
	bin := binary(t, build{goarch: "arm", goarm: tg.goarm, strip: true}) // as make dist builds it
	boards := qhLayout(t, 3, tg.board)
	wrapper := []string{qemu}
	if tg.cpu != "" {
		wrapper = append(wrapper, "-cpu", tg.cpu)
	}
	start := time.Now()
	for _, b := range boards {
		b.startWith(t, wrapper, bin)
	}
	// Booted together, ews1 ends up master; but an emulated board on busy
	// cores can start more than tmax after the others, and then (preempt
	// off) it follows the master it finds: any one master will do.
	var master string
	var epoch uint64
	testutil.EventuallyWithin(t, "one master of three running boards", 60*time.Second, func() bool {
		master, epoch = masterOf(boards)
		return master != ""
	})
	t.Logf("%s under qemu: three boards running, %s master (epoch %d), %v after start", tg.name, master, epoch, time.Since(start).Round(time.Millisecond))
	for _, b := range boards {
		if v, err := b.view(); err == nil {
			t.Logf("%s: own row load %s, load_unknown %v", b.name, v.self().Load, v.self().LoadUnknown)
		}
		if strings.Contains(b.log.String(), "panic in Local") {
			t.Errorf("%s: a panic sampling the board reached the cluster:\n%s", b.name, b.log.String())
		}
	}
	old, rest := qhSplit(boards, master)
	qhLogRSS(t, tg, rest[0])

	// the master takes the request and dispatches it to a board of its choice
	t.Logf("CGI through the master %s: %s", old.name, old.cgiOK(t))

	old.kill9()
	var next string
	took := testutil.EventuallyWithin(t, "a peer takes over", 60*time.Second, func() bool {
		var e uint64
		next, e = masterOf(rest)
		return next != "" && next != old.name && e > epoch
	})
	t.Logf("%s under qemu: %s took over, seen %v after kill -9 of %s (tmax 2s)", tg.name, next, took.Round(time.Millisecond), old.name)
	_, followers := qhSplit(rest, next)
	t.Logf("CGI after the takeover, entering at the follower %s: %s", followers[0].name, followers[0].cgiOK(t))
}

// qhSplit is the board named name and the others.
func qhSplit(boards []*board, name string) (*board, []*board) {
	var it *board
	var rest []*board
	for _, b := range boards {
		if b.name == name {
			it = b
		} else {
			rest = append(rest, b)
		}
	}
	return it, rest
}

const qhToken = "t0k"

// qhCGI is the cluster's one action: a CGI program that names the board
// that ran it.
const qhCGI = "#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n\\r\\n'\necho \"served by $EWS_NODE\"\n"

// qhLayout writes the configs of n host boards on free loopback ports with
// emulation-friendly timings, and a CGI directory, and returns them unstarted.
func qhLayout(t *testing.T, n int, kind string) []*board {
	t.Helper()
	dir := t.TempDir()
	cgi := filepath.Join(dir, "cgi-bin")
	if err := os.MkdirAll(cgi, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cgi, "who.sh"), []byte(qhCGI), 0o755); err != nil {
		t.Fatal(err)
	}
	boards, _ := layout(t, n)
	boardTOML{
		node:    fmt.Sprintf("capacity = 2\nboard = %q\n", kind),
		cluster: "tmax = \"2s\"\ntthreshold = \"1s\"\nheartbeat = \"200ms\"\n",
		rest:    fmt.Sprintf("[http]\nauth = \"token\"\ntoken = %q\n[cgi]\ndir = %q\n", qhToken, cgi),
	}.write(t, boards)
	return boards
}

// cgi runs the CGI program with the request entering at this board.
func (b *board) cgi() (int, string) {
	code, body, err := b.do(qhToken, "GET", "/cgi-bin/who.sh", "")
	if err != nil {
		return 0, err.Error()
	}
	return code, string(body)
}

// cgiOK runs the CGI program entering at this board until it answers 200
// and returns what it printed. A 5xx or no answer is tried again, a
// heartbeat apart, for a bounded time, as a client honouring Retry-After
// would: on two busy cores an emulated board can miss tmax, and a request
// that meets the short mastership dispute that follows is answered 503 (by
// design). Each such answer is logged; any other answer fails at once.
func (b *board) cgiOK(t *testing.T) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		code, body := b.cgi()
		body = strings.TrimSpace(body)
		switch {
		case code == 200 && strings.Contains(body, "served by ews"):
			return body
		case code != 0 && code < 500:
			t.Fatalf("CGI entering at %s: %d %s", b.name, code, body)
		case time.Now().After(deadline):
			t.Fatalf("CGI entering at %s: %d %s, still after 30s", b.name, code, body)
		}
		t.Logf("CGI entering at %s: %d %s (tried again)", b.name, code, body)
		<-time.After(200 * time.Millisecond) // a client's retry pacing, not a wait for a condition
	}
}

// qhLogRSS logs an idle board's resident memory as the host sees the qemu
// process (the guest plus qemu's own translator) and the Go runtime's
// memory as the board reports it.
func qhLogRSS(t *testing.T, tg qhTarget, b *board) {
	rss := rssKB(b.cmd.Process.Pid)
	var info struct {
		Memory struct {
			ProcessBytes uint64 `json:"process_bytes"`
		} `json:"memory"`
	}
	if _, body, err := b.do(qhToken, "GET", "/api/board", ""); err == nil {
		_ = json.Unmarshal(body, &info)
	}
	cpu := tg.cpu
	if cpu == "" {
		cpu = "default"
	}
	t.Logf("%s under qemu (-cpu %s): idle board RSS %d KiB (qemu included), Go runtime %d KiB",
		tg.name, cpu, rss, info.Memory.ProcessBytes>>10)
}
