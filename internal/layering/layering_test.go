package layering

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const mod = "github.com/ews-firmware/ews"

// pkg is what `go list -json` says of a package: its non-test imports,
// direct and transitive.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

func list(t *testing.T) map[string]pkg {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command:", err)
	}
	readSources(t)
	out, err := exec.Command("go", "list", "-json", mod+"/...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list: decode: %v", err)
		}
		pkgs[p.ImportPath] = p
	}
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages of %s; want the whole module", len(pkgs), mod)
	}
	return pkgs
}

// readSources reads every Go file of the module, so that go test's cache,
// which keys a result on the files a test opened, runs this test again
// after any import changed (go list's own reads are not seen).
func readSources(t *testing.T) {
	t.Helper()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			_, err = os.ReadFile(path)
		}
		return err
	})
	if err != nil {
		t.Fatalf("read the module's sources: %v", err)
	}
}

// under reports whether path is dir or a package below it.
func under(path, dir string) bool { return path == dir || strings.HasPrefix(path, dir+"/") }

// TestImportDirection checks the table of docs/architecture.md's Layout section:
//
//	cmd/ews → node → node/* (own Options/Config) ; node → node/bootconf → internal/config
//	internal/config → internal/ leaves only (never state, sched, hal, vip)
//	state, sched, hal, vip ↛ node, internal/config
//	sched → state/row (leaf), never memberlist
//	node/dispatch → node/dispatch/place → sched (the placement protocol knows no front door)
//	internal/* ↛ sched, state, hal, node (nothing runs up from the leaves)
//
// Each package's own imports count (`go list` Deps, tests left out).
func TestImportDirection(t *testing.T) {
	pkgs := list(t)
	cfg, nodeDir := mod+"/internal/config", mod+"/node"
	rules := []struct {
		name   string
		from   func(string) bool // the packages the rule is about
		banned func(string) bool // what none of them may depend on
	}{
		{"nothing under node/ but node and its mapping (node/bootconf) reads the boot config",
			func(p string) bool { return under(p, nodeDir) && p != nodeDir && p != nodeDir+"/bootconf" },
			func(d string) bool { return d == cfg }},
		{"state, sched, hal and vip know neither node nor the boot config",
			func(p string) bool {
				return under(p, mod+"/state") || under(p, mod+"/sched") || under(p, mod+"/hal") || under(p, mod+"/vip")
			},
			func(d string) bool { return under(d, nodeDir) || under(d, cfg) }},
		{"the boot config is a leaf: it depends on internal/ packages only",
			func(p string) bool { return p == cfg },
			func(d string) bool { return under(d, mod) && !under(d, mod+"/internal") }},
		{"the scheduler does not carry the gossip layer",
			func(p string) bool { return under(p, mod+"/sched") || p == mod+"/state/row" },
			func(d string) bool { return under(d, "github.com/hashicorp/memberlist") || d == mod+"/state" }},
		{"nothing under internal/ knows sched, state, hal or node",
			func(p string) bool { return under(p, mod+"/internal") },
			func(d string) bool {
				return under(d, mod+"/sched") || under(d, mod+"/state") || under(d, mod+"/hal") || under(d, nodeDir)
			}},
		{"the placement protocol knows the scheduler, not the front door",
			func(p string) bool { return p == mod+"/node/dispatch/place" },
			func(d string) bool { return d == nodeDir || d == mod+"/node/dispatch" || d == mod+"/state" }},
	}
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			checked := 0
			for _, path := range slices.Sorted(maps.Keys(pkgs)) {
				p := pkgs[path]
				if !r.from(path) {
					continue
				}
				checked++
				for _, d := range p.Deps {
					if r.banned(d) {
						t.Errorf("%s depends on %s", strings.TrimPrefix(path, mod+"/"), d)
					}
				}
			}
			if checked == 0 {
				t.Fatal("no package matched the rule: a package moved?")
			}
		})
	}
}

// TestRowIsALeaf: the board row depends on no other package of the module,
// so whoever reads the table does not pull in memberlist.
func TestRowIsALeaf(t *testing.T) {
	p, ok := list(t)[mod+"/state/row"]
	if !ok {
		t.Fatal("state/row is missing")
	}
	for _, d := range p.Deps {
		if under(d, mod) {
			t.Errorf("state/row depends on %s", d)
		}
	}
}
