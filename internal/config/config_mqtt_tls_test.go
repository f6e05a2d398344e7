package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
			_, err := Parse("/boot/ews.toml", []byte("[http]\nauth = \"none\"\n"+tt.doc))
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("accepted: %v", err)
			}
			for _, e := range es {
				if e.Key == tt.key && strings.Contains(e.Msg, tt.msg) && e.Line == tt.line+2 {
					return
				}
			}
			t.Fatalf("no error for %s at line %d with %q in:\n%v", tt.key, tt.line+2, tt.msg, err)
		})
	}
}

// `ews config check` reads the CA and client certificate as run does.
func TestMQTTTLSFilesChecked(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "junk.pem")
	if err := os.WriteFile(junk, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
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
