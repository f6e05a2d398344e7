package e2e

import (
	"errors"
	"fmt"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// lastLanded is the commit of the last landing on main: the version a
// cluster in the field runs and must upgrade from
// (docs/notes/upgrade-from-last-landed.md). Each landing moves it forward to main's new head, so the
// next change is tested against what boards run then.
const lastLanded = "2d7e2b2d90463038ee0245aabe21e79dc83c6b57"

// unsealedBuild is the last landed commit whose boards do not seal
// their gossip (dc20262, before the third wave's sealing): a board rolled
// back by its A/B slot onto a build that old is still taken back
// (TestRollbackAfterSealedUpgrade). It stays pinned when lastLanded moves.
const unsealedBuild = "dc202624b32589a80c9525ef3a831334c088ddbf"

// landedBuilds holds the binaries built per commit in this test process.
var landedBuilds struct {
	sync.Mutex
	path map[string]string
}

// lastLandedBinary is ews built from lastLanded as the Makefile ships it
// (CGO_ENABLED=0, -trimpath, -tags nethttpomithttp2, -s -w, the version
// stamped with the short commit), without -race. It is built once per
// commit and machine and kept under the user's cache dir
// (ews-test/ews-COMMIT-GOOS-GOARCH-GOVERSION), so later runs start at once.
// The test is skipped when the clone does not hold the commit (a shallow
// clone: git fetch --unshallow).
func lastLandedBinary(t *testing.T) string {
	t.Helper()
	return landedBinary(t, lastLanded)
}

// landedBinary is ews built from commit, a landing on main, the way
// lastLandedBinary describes.
func landedBinary(t *testing.T, commit string) string {
	t.Helper()
	landedBuilds.Lock()
	defer landedBuilds.Unlock()
	if p, ok := landedBuilds.path[commit]; ok {
		return p
	}
	if landedBuilds.path == nil {
		landedBuilds.path = map[string]string{}
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "ews-test")
	p := filepath.Join(dir, fmt.Sprintf("ews-%s-%s-%s-%s", commit, runtime.GOOS, runtime.GOARCH, runtime.Version()))
	if _, err := os.Stat(p); err == nil {
		landedBuilds.path[commit] = p
		return p
	}
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("e2e: not in a git clone (%v): the upgrade test builds ews from commit %s of its history", err, commit)
	}
	repo := strings.TrimSpace(string(root))
	if err := exec.Command("git", "-C", repo, "cat-file", "-e", commit+"^{commit}").Run(); err != nil {
		t.Skipf("e2e: commit %s (the last landing) is not in this clone's history, a shallow clone? (git fetch --unshallow, then run again)", commit)
	}
	src := t.TempDir()
	archive := exec.Command("git", "-C", repo, "archive", "--format=tar", commit)
	untar := exec.Command("tar", "-x", "-C", src)
	pipe, err := archive.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	untar.Stdin = pipe
	var archErr, tarErr testutil.Buffer
	archive.Stderr, untar.Stderr = &archErr, &tarErr
	if err := untar.Start(); err != nil {
		t.Fatalf("e2e: tar: %v", err)
	}
	if err := archive.Run(); err != nil {
		_ = untar.Wait()
		t.Fatalf("e2e: git archive %s: %v\n%s", commit, err, archErr.String())
	}
	if err := untar.Wait(); err != nil {
		t.Fatalf("e2e: unpack git archive %s: %v\n%s", commit, err, tarErr.String())
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// into a temp name first: another test process may build the same
	// commit at the same time, and a half-written binary must never be
	// taken from the cache
	tmp, err := os.CreateTemp(dir, ".build-*")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	ldflags := fmt.Sprintf("-s -w -X github.com/ews-firmware/ews/internal/buildinfo.Version=%s -X github.com/ews-firmware/ews/internal/buildinfo.Commit=%s",
		commit[:7], commit[:7])
	build := exec.Command("go", "build", "-trimpath", "-tags", shipTags, "-ldflags", ldflags, "-o", tmp.Name(), "./cmd/ews")
	build.Dir = src
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOFLAGS=-buildvcs=false")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("e2e: build ews at %s (the last landing): %v\n%s", commit, err, out)
	}
	if err := os.Chmod(tmp.Name(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), p); err != nil && !errors.Is(err, os.ErrExist) {
		t.Fatal(err)
	}
	landedBuilds.path[commit] = p
	return p
}
