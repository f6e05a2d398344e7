package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// mqtts:// (also ssl://, tls://) is a broker address, default port 8883.
func TestMQTTBrokerTLSURL(t *testing.T) {
	cases := []struct{ in, want string }{
		{"mqtts://broker.lan", "mqtts://broker.lan:8883"},
		{"ssl://10.0.0.5:9883", "mqtts://10.0.0.5:9883"},
		{"tls://broker.lan", "mqtts://broker.lan:8883"},
		{"tcp://broker.lan", "tcp://broker.lan:1883"},
		{"broker.lan:1884", "tcp://broker.lan:1884"},
	}
	for _, c := range cases {
		m := &MQTT{Broker: c.in}
		if got, err := m.BrokerURL(); err != nil || got != c.want {
			t.Errorf("%s: %q %v, want %q", c.in, got, err, c.want)
		}
	}
	if _, err := (&MQTT{Broker: "wss://x"}).BrokerURL(); err == nil || !strings.Contains(err.Error(), "mqtts://") {
		t.Errorf("wss: %v", err)
	}
}

// `ews config check` reads the CA and client certificate as run does.
func TestMQTTTLSFilesChecked(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "junk.pem")
	testutil.WriteFile(t, junk, []byte("not a certificate"), 0o600)
	doc := "[http]\nauth = \"none\"\n[mqtt]\nbroker = \"mqtts://b\"\nca_file = \"" + junk + "\"\ncert_file = \"" + junk + "\"\nkey_file = \"" + junk + "\"\n" +
		"[node]\nsecrets_dir = \"" + filepath.Dir(junk) + "\"\n" // key_file may be read from there
	cfg, err := Parse("/boot/ews.toml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	errs, _ := cfg.CheckSecrets()
	keys := map[string]int{}
	for _, e := range errs {
		keys[e.Key] = e.Line
	}
	if keys["mqtt.ca_file"] != 5 || keys["mqtt.cert_file"] != 6 {
		t.Fatalf("errors %v", errs)
	}
}
