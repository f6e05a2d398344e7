package config_test

import (
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/config/configtest"
)

// problems is every problem ParseAll finds in doc.
func problems(doc string) config.Errors {
	_, errs := config.ParseAll("ews.toml", []byte(doc))
	return errs
}

func TestParseValid(t *testing.T) {
	cfg, err := config.Parse("ews.toml", []byte(configtest.ValidCluster))
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
			_, err := config.Parse("/boot/ews.toml", []byte(tt.doc))
			configtest.Refused(t, err, "/boot/ews.toml", configtest.Want{Line: tt.line, Key: tt.key, Msg: tt.msg})
		})
	}
}

// [cgi]'s limits and user are checked with their file:line.
func TestCGIBadInput(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		line     int
		key, msg string
	}{
		{"zero cpu", "[cgi]\ncpu_seconds = 0\n", 2, "cgi.cpu_seconds", "at least 1"},
		{"tiny memory", "[cgi]\nmax_memory = 1000\n", 2, "cgi.max_memory", "at least 16 MiB"},
		{"negative processes", "[cgi]\nmax_processes = -1\n", 2, "cgi.max_processes", "at least 1"},
		{"memory as text", "[cgi]\nmax_memory = \"lots\"\n", 2, "cgi.max_memory", "want an integer"},
		{"root", "[cgi]\nuser = \"root\"\n", 2, "cgi.user", "not root"},
		{"ews itself", "[cgi]\nuser = \"ews\"\n", 2, "cgi.user", "the user ews runs as"},
		{"zero timeout", "[cgi]\ntimeout = \"0s\"\n", 2, "cgi.timeout", "must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse("/boot/ews.toml", []byte(tt.doc))
			configtest.Refused(t, err, "/boot/ews.toml", configtest.Want{Line: tt.line, Key: tt.key, Msg: tt.msg})
		})
	}
}

func TestMQTTTLSBadInput(t *testing.T) {
	tests := []struct {
		name, doc string
		line      int
		key, msg  string
	}{
		{"ca_file without TLS", "[mqtt]\nbroker = \"tcp://b:1883\"\nca_file = \"/etc/ews/mqtt-ca.pem\"\n", 3, "mqtt.ca_file", "mqtts://"},
		{"cert without key", "[mqtt]\nbroker = \"mqtts://b\"\ncert_file = \"/etc/ews/mqtt.pem\"\n", 3, "mqtt.cert_file", "both cert_file and key_file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse("/boot/ews.toml", []byte("[http]\nauth = \"none\"\n"+tt.doc))
			configtest.Refused(t, err, "/boot/ews.toml", configtest.Want{Line: tt.line + 2, Key: tt.key, Msg: tt.msg})
		})
	}
}

func TestHistoryKeysRefused(t *testing.T) {
	errs := problems(`[node]
name = "ews1"
[history]
flush = "10ms"
keep = "1h"
max_mb = 0
`)
	configtest.Problems(t, errs, []configtest.Want{
		{Line: 4, Key: "history.flush", Msg: "at least 1s"},
		{Line: 5, Key: "history.keep", Msg: "shorter than history.full"},
		{Line: 6, Key: "history.max_mb", Msg: "want 1..65536"},
	})
}
