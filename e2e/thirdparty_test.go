package e2e

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// offline matches what `go mod download` says when the module proxy cannot
// be reached.
var offline = regexp.MustCompile(`dial tcp|no such host|connection refused|i/o timeout|network is unreachable|TLS handshake timeout|GOPROXY=off|GOFLAGS=-mod=vendor|server misbehaving`)

// TestThirdPartyRegenerates runs scripts/third-party.sh into a temp dir and
// diffs what it makes with the committed third_party/: a hand edit of a
// copy, or a patch that no longer yields it, shows here.
func TestThirdPartyRegenerates(t *testing.T) {
	long(t, "downloads the pinned modules")
	script, err := os.ReadFile("../scripts/third-party.sh")
	if err != nil {
		t.Fatal(err)
	}
	copies := regexp.MustCompile(`(?m)^copy (\S+) (v\S+) (\S+) `).FindAllStringSubmatch(string(script), -1)
	if len(copies) == 0 {
		t.Fatal("scripts/third-party.sh copies nothing: the test would prove nothing")
	}
	for _, c := range copies {
		if out, err := exec.Command("go", "mod", "download", "-json", c[1]+"@"+c[2]).CombinedOutput(); err != nil {
			if offline.Match(out) {
				t.Skipf("third_party: the module proxy cannot be reached (offline), %s@%s not downloaded", c[1], c[2])
			}
			t.Fatalf("go mod download %s@%s: %v\n%s", c[1], c[2], err, out)
		}
	}
	dir := t.TempDir()
	if out, err := exec.Command("bash", "../scripts/third-party.sh", dir).CombinedOutput(); err != nil {
		t.Fatalf("scripts/third-party.sh: %v\n%s", err, out)
	}
	for _, c := range copies {
		for _, d := range diffTrees(t, filepath.Join("../third_party", c[3]), filepath.Join(dir, c[3])) {
			t.Errorf("third_party/%s: %s (rerun scripts/third-party.sh, or put the change in third_party/%s.patch)", c[3], d, c[3])
		}
	}
}

// diffTrees lists the files that differ between the committed tree and the
// regenerated one.
func diffTrees(t *testing.T, committed, regenerated string) []string {
	t.Helper()
	a, b := readTree(t, committed), readTree(t, regenerated)
	var diffs []string
	for name, data := range a {
		other, ok := b[name]
		switch {
		case !ok:
			diffs = append(diffs, name+": committed, not regenerated")
		case !bytes.Equal(data, other):
			diffs = append(diffs, name+": differs from the regenerated copy")
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			diffs = append(diffs, name+": regenerated, not committed")
		}
	}
	slices.Sort(diffs)
	return diffs
}

// readTree reads every regular file under root by its slash path.
func readTree(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("%s holds no file", strings.TrimPrefix(root, "../"))
	}
	return files
}
