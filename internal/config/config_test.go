package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const validCluster = `
[node]
name = "ews2"
capacity = 2

[cluster]
peers = ["ews1=10.0.0.11:7946", "ews2=10.0.0.12:7946", "ews3=10.0.0.13:7946"]
key = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="
tmax = "300ms"

[[device]]
name = "relay1"
driver = "gpio-out"
pin = "GPIO17"
`

func TestParseValid(t *testing.T) {
	cfg, err := Parse("ews.toml", []byte(validCluster))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Node.Name != "ews2" || cfg.Node.Capacity != 2 || cfg.Node.HTTP != ":8080" {
		t.Fatalf("node = %+v", cfg.Node)
	}
	if cfg.Cluster.TMax.Duration != 300*time.Millisecond || cfg.Cluster.Heartbeat.Duration != 100*time.Millisecond {
		t.Fatalf("timings = %+v", cfg.Cluster)
	}
	if got := cfg.Rank("ews3"); got != 2 {
		t.Fatalf("rank of ews3 = %d, want 2", got)
	}
	if cfg.Devices[0].Node != "ews2" {
		t.Fatalf("device node defaults to this board, got %q", cfg.Devices[0].Node)
	}
	if len(cfg.Sched.Classes) != 0 { // none written: the policy's (node maps them from sched.ClassesFor)
		t.Fatalf("classes = %+v, want none", cfg.Sched.Classes)
	}
	k, err := cfg.ClusterKey()
	if err != nil || len(k) != 32 {
		t.Fatalf("key = %d bytes, %v", len(k), err)
	}
}

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

// TestBadInput: each bad input is refused with file, line and key.
func TestBadInput(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		line     int
		key, msg string
	}{
		{"unknown key", "[node]\nname = \"a\"\ncolour = 3\n", 3, "node.colour", "unknown key"},
		{"wrong type", "[node]\ncapacity = \"four\"\n", 2, "node.capacity", "want an integer, got a string"},
		{"bad duration", "[cluster]\ntmax = \"1 sec\"\n", 2, "cluster.tmax", `want a duration such as "500ms", got "1 sec"`},
		{"negative duration", "[cluster]\ntmax = \"-1s\"\n", 2, "cluster.tmax", "negative duration"},
		{"negative capacity", "[node]\nname = \"a\"\ncapacity = -1\n", 3, "node.capacity", "at least 1"},
		{"insecure with a key", "[node]\nname = \"ews1\"\n[cluster]\ninsecure = true\nkey_file = \"/etc/ews/cluster.key\"\npeers = [\"ews1=h:1\", \"ews2=h:2\"]\n", 4, "cluster.insecure", "turns gossip encryption off"},
		{"name not in peers", "[node]\nname = \"ews9\"\n[cluster]\ninsecure = true\npeers = [\"ews1=h:1\", \"ews2=h:2\"]\n", 2, "node.name", "not in cluster.peers"},
		{"duplicate peer name", "[node]\nname = \"ews1\"\n[cluster]\ninsecure = true\npeers = [\"ews1=h:1\", \"ews1=h:2\"]\n", 5, "cluster.peers", "duplicate peer name"},
		{"duplicate peer address", "[node]\nname = \"ews1\"\n[cluster]\ninsecure = true\npeers = [\n  \"ews1=h:1\",\n  \"ews2=h:1\",\n]\n", 5, "cluster.peers", "duplicate peer address"},
		{"malformed peer", "[node]\nname = \"ews1\"\n[cluster]\ninsecure = true\npeers = [\"ews1\"]\n", 5, "cluster.peers", "name=host:port"},
		{"duplicate device", "[[device]]\nname = \"r\"\ndriver = \"gpio-out\"\n[[device]]\nname = \"r\"\ndriver = \"gpio-out\"\n", 5, "device[1].name", "duplicate device"},
		{"pin used twice", "[[device]]\nname = \"a\"\ndriver = \"gpio-out\"\npin = \"GPIO4\"\n[[device]]\nname = \"b\"\ndriver = \"gpio-in\"\npin = \"GPIO4\"\n", 8, "device[1].pin", "already used"},
		{"short key", "[node]\nname = \"ews1\"\n[cluster]\npeers = [\"ews1=h:1\"]\nkey = \"c2hvcnQ=\"\n", 5, "cluster.key", "want 16, 24 or 32 bytes"},
		{"key not base64", "[cluster]\nkey = \"!!!\"\n", 2, "cluster.key", "not valid base64"},
		{"missing key", "[node]\nname = \"ews1\"\n[cluster]\npeers = [\"ews1=h:1\"]\n", 3, "cluster", "no key"},
		{"bad cidr", "[[sched.proximity]]\ncidr = \"10.1.0.0/33\"\nprefer = [\"ews1\"]\n", 2, "sched.proximity[0].cidr", "10.1.0.0/33"},
		{"auth typo", "[http]\nauth = \"tokne\"\n", 2, "http.auth", "want token, basic or none"},
		{"tmax not above heartbeat", "[cluster]\nheartbeat = \"1s\"\ntmax = \"500ms\"\n", 3, "cluster.tmax", "longer than heartbeat"},
		{"syntax", "[node\nname = 1\n", 1, "", "expected ']'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("/boot/ews.toml", []byte(tt.doc))
			if err == nil {
				t.Fatal("accepted")
			}
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %T %v is not config.Errors", err, err)
			}
			var hit *Error
			for _, e := range es {
				if e.Key == tt.key && strings.Contains(e.Msg, tt.msg) {
					hit = e
				}
			}
			if hit == nil {
				t.Fatalf("no error for key %q with %q in:\n%v", tt.key, tt.msg, err)
			}
			if hit.File != "/boot/ews.toml" || hit.Line != tt.line {
				t.Fatalf("error at %s:%d, want /boot/ews.toml:%d (%v)", hit.File, hit.Line, tt.line, hit)
			}
			if want := "config: /boot/ews.toml:"; !strings.HasPrefix(hit.Error(), want) {
				t.Fatalf("message %q does not start with %q", hit.Error(), want)
			}
		})
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
	if err := os.WriteFile(kf, []byte(NewKey()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
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
	if err := os.WriteFile(second, nil, 0o600); err != nil {
		t.Fatal(err)
	}
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
