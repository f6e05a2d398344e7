package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func TestFileClassesReplaceDefaults(t *testing.T) {
	cfg, err := Parse("x.toml", []byte("[[sched.class]]\nname = \"all\"\nmatch = [\"*\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Sched.Classes) != 1 || cfg.Sched.Classes[0].Name != "all" {
		t.Fatalf("classes = %+v", cfg.Sched.Classes)
	}
}

// A proximity entry without prefer is a learned rule, not an error.
func TestProximityWithoutPreferIsLearned(t *testing.T) {
	cfg, err := Parse("x.toml", []byte("[[sched.proximity]]\ncidr = \"0.0.0.0/0\"\n"))
	if err != nil {
		t.Fatalf("config check rejects a learned proximity rule: %v", err)
	}
	if len(cfg.Sched.Proximity) != 1 || len(cfg.Sched.Proximity[0].Prefer) != 0 {
		t.Fatalf("proximity = %+v, want one rule preferring nothing", cfg.Sched.Proximity)
	}
}

func TestExampleIsValid(t *testing.T) {
	cfg, err := Parse("example.toml", []byte(Example()))
	if err != nil {
		t.Fatalf("config init output does not pass check: %v", err)
	}
	if len(cfg.Cluster.Peers) != 3 || cfg.Sim == nil {
		t.Fatalf("example lost its cluster or sim section: %+v", cfg)
	}
	if Example() == Example() {
		t.Fatal("each example must carry a fresh key")
	}
	if cfg.Node.MDNS == nil || !cfg.Node.MDNSOn() {
		t.Fatal("the example no longer shows [node] mdns")
	}
}

// [node] mdns is on unless the file turns it off.
func TestMDNSDefault(t *testing.T) {
	for doc, want := range map[string]bool{"": true, "[node]\nmdns = true\n": true, "[node]\nmdns = false\n": false} {
		cfg, err := Parse("m.toml", []byte(doc+"[http]\nauth = \"none\"\n"))
		if err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if cfg.Node.MDNSOn() != want {
			t.Errorf("%q: mdns on = %v, want %v", doc, cfg.Node.MDNSOn(), want)
		}
	}
}

func TestLoadUnreadable(t *testing.T) {
	dir := t.TempDir()
	_, err := Load(filepath.Join(dir, "missing.toml"))
	if err == nil || !strings.Contains(err.Error(), "missing.toml") {
		t.Fatalf("err = %v, want one naming the file", err)
	}
}

func TestKeyFile(t *testing.T) {
	dir := t.TempDir()
	kf := filepath.Join(dir, "cluster.key")
	testutil.WriteFile(t, kf, []byte(NewKey()+"\n"), 0o600)
	doc := "[node]\nname = \"ews1\"\n[cluster]\npeers = [\"ews1=h:1\"]\nkey_file = \"" + kf + "\"\n"
	cfg, err := Parse("x.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if k, err := cfg.ClusterKey(); err != nil || len(k) != 32 {
		t.Fatalf("key %d bytes, %v", len(k), err)
	}
	cfg.Cluster.KeyFile = filepath.Join(dir, "nope")
	if _, err := cfg.ClusterKey(); err == nil || !strings.Contains(err.Error(), "cluster.key_file") {
		t.Fatalf("unreadable key file: %v", err)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	old := SearchPaths
	t.Cleanup(func() { SearchPaths = old })
	second := filepath.Join(dir, "etc.toml")
	testutil.WriteFile(t, second, nil, 0o600)
	SearchPaths = []string{filepath.Join(dir, "boot.toml"), second}
	t.Setenv("EWS_CONFIG", "")
	if got, err := Find(""); err != nil || got != second {
		t.Fatalf("Find = %q, %v; want the first existing search path", got, err)
	}
	t.Setenv("EWS_CONFIG", "/env.toml")
	if got, _ := Find(""); got != "/env.toml" {
		t.Fatalf("$EWS_CONFIG not first: %q", got)
	}
	if got, _ := Find("/flag.toml"); got != "/flag.toml" {
		t.Fatalf("--config not first: %q", got)
	}
	t.Setenv("EWS_CONFIG", "")
	SearchPaths = []string{filepath.Join(dir, "none.toml")}
	if _, err := Find(""); err == nil {
		t.Fatal("no file found but no error")
	}
}

func TestKeyLines(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want map[string]int
	}{
		{"tables, arrays of tables, multi-line array",
			"[node]\nname = \"a\"\n\n[[device]]\nname = \"x\"\ncommand = [\n \"a\",\n \"b\",\n]\npin = \"1\"\n[[device]]\nname = \"y\"\n[device.opts]\nk = 1\n",
			map[string]int{"node.name": 2, "device[0]": 4, "device[0].name": 5, "device[0].command": 6,
				"device[0].pin": 10, "device[1].name": 12, "device[1].opts.k": 14}},
		{"dotted keys", "node.name = \"a\"\n\nnode.capacity = 3\n",
			map[string]int{"node.name": 1, "node.capacity": 3}},
		{"quoted keys and headers", "[\"node\"]\n\"capacity\" = 3\n[ 'sched' ]\n'policy' = \"lc\"\n",
			map[string]int{"node": 1, "node.capacity": 2, "sched": 3, "sched.policy": 4}},
		{"inline table", "[sched]\nintegrated = { weights = { cpu = 4 },\n limits = {} }\n",
			map[string]int{"sched.integrated": 2, "sched.integrated.weights": 2, "sched.integrated.weights.cpu": 2}},
		{"header with a comment and spaces", "  [[ sched.class ]] # first\nname = \"c\"\n",
			map[string]int{"sched.class[0]": 1, "sched.class[0].name": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := keyLines([]byte(tt.doc))
			for k, v := range tt.want {
				if lines[k] != v {
					t.Errorf("%s on line %d, want %d (all: %v)", k, lines[k], v, lines)
				}
			}
		})
	}
}

func TestDottedKeyErrorHasItsLine(t *testing.T) {
	_, err := Parse("d.toml", []byte("node.name = \"ews1\"\n\n\nnode.capacity = 0\n"))
	if err == nil || !strings.Contains(err.Error(), "d.toml:4") {
		t.Fatalf("error %v, want it on d.toml:4", err)
	}
}

func TestCommandForms(t *testing.T) {
	doc := "[[supervise]]\nname = \"a\"\ncommand = [\"/usr/bin/helper\", \"--fast\"]\n[[supervise]]\nname = \"b\"\ncommand = \"helper --fast | logger\"\n"
	cfg, err := Parse("x.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Supervise[0].Command; len(got) != 2 || got[0] != "/usr/bin/helper" {
		t.Fatalf("array form: %q", got)
	}
	if got := cfg.Supervise[1].Command; len(got) != 3 || got[0] != "/bin/sh" || got[2] != "helper --fast | logger" {
		t.Fatalf("string form: %q, want a shell line", got)
	}
	if _, err := Parse("x.toml", []byte("[[supervise]]\nname = \"c\"\ncommand = \"\"\n")); err == nil {
		t.Fatal("empty command accepted")
	}
}
