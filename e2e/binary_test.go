package e2e

import (
	"cmp"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/apicheck"
)

// shipTags are the build tags of the binaries the Makefile ships (TAGS):
// tests run what boards run.
const shipTags = "nethttpomithttp2"

// ewsPkg is the package every test binary is built from.
const ewsPkg = "github.com/ews-firmware/ews/cmd/ews"

// build says how to build one ews binary; the zero value is the shipped one
// for this machine.
type build struct {
	tags    string // more build tags, beside shipTags
	version string // buildinfo.Version, when set
	goarch  string // cross-build for linux/goarch, when set
	goarm   string // with goarch arm: GOARM (5, 6, 7); "" is 7
	strip   bool   // -ldflags "-s -w", as make dist builds
}

func (b build) name() string {
	return strings.NewReplacer(",", "_", "/", "_").Replace(fmt.Sprintf("ews-%s-%s-%s%s-%v", b.tags, b.version, b.goarch, b.goarm, b.strip))
}

var builds struct {
	mu   sync.Mutex
	dir  string
	done map[build]string
}

// binary builds ews as b says, once per test run; every test shares the
// result (the built files stay in one temp directory for the whole run).
func binary(t testing.TB, b build) string {
	t.Helper()
	builds.mu.Lock()
	defer builds.mu.Unlock()
	if p, ok := builds.done[b]; ok {
		return p
	}
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "ews-e2e-bin-")
		if err != nil {
			t.Fatal(err)
		}
		builds.dir, builds.done = dir, map[build]string{}
	}
	p := filepath.Join(builds.dir, b.name())
	tags := shipTags
	if b.tags != "" {
		tags = b.tags + "," + shipTags
	}
	args := []string{"build", "-trimpath", "-tags", tags, "-o", p}
	var ldflags []string
	if b.strip {
		ldflags = append(ldflags, "-s", "-w")
	}
	if b.version != "" {
		ldflags = append(ldflags, "-X github.com/ews-firmware/ews/internal/buildinfo.Version="+b.version)
	}
	if len(ldflags) > 0 {
		args = append(args, "-ldflags", strings.Join(ldflags, " "))
	}
	cmd := exec.Command("go", append(args, ewsPkg)...)
	if b.goarch != "" {
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+b.goarch, "CGO_ENABLED=0")
		if b.goarch == "arm" {
			cmd.Env = append(cmd.Env, "GOARM="+cmp.Or(b.goarm, "7"))
		}
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("e2e: build %+v: %v\n%s", b, err, out)
	}
	builds.done[b] = p
	return p
}

// ewsBinary is the shipped binary for this machine.
func ewsBinary(t testing.TB) string { return binary(t, build{}) }

// versionBinary is the shipped binary with buildinfo.Version = version.
func versionBinary(t testing.TB, version string) string {
	return binary(t, build{version: version})
}

// TestMain removes the binaries the run built, and fails the run when an
// answer a test received does not match docs/openapi.yaml (checked).
func TestMain(m *testing.M) {
	if err := apicheck.Ready(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	code := m.Run()
	if builds.dir != "" {
		_ = os.RemoveAll(builds.dir)
	}
	if ps := apiProblems.All(); len(ps) > 0 {
		fmt.Fprintf(os.Stderr, "e2e: %d answers do not match docs/openapi.yaml (fix the answer or the document):\n", len(ps))
		for _, p := range ps {
			fmt.Fprintln(os.Stderr, "  "+p)
		}
		fmt.Println("FAIL: answers outside docs/openapi.yaml")
		code = 1
	}
	os.Exit(code)
}
