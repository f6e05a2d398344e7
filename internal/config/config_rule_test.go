package config

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// automationBase is the board the rule tests add rules to.
const automationBase = testutil.RulesBoard

func TestMQTTConfig(t *testing.T) {
	cfg, err := Parse("ews.toml", []byte(automationBase+"[mqtt]\nbroker = \"10.0.0.5\"\ndiscovery = true\n"))
	if err != nil {
		t.Fatal(err)
	}
	u, err := cfg.MQTT.BrokerURL()
	if err != nil || u != "tcp://10.0.0.5:1883" || cfg.MQTT.Prefix != "ews" || cfg.MQTT.DiscoveryPrefix != "homeassistant" {
		t.Fatalf("mqtt = %+v, %q, %v", cfg.MQTT, u, err)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"no broker", "prefix = \"x\"", "mqtt.broker: empty broker"},
		{"bad scheme", "broker = \"ws://h:1\"", "scheme \"ws\" not supported"},
		{"bad prefix", "broker = \"h:1\"\nprefix = \"a/b\"", "mqtt.prefix"},
		{"password without user", "broker = \"h:1\"\npassword_file = \"/x\"", "needs mqtt.user"},
		{"unknown key", "broker = \"h:1\"\nbrokr = \"x\"", "unknown key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("ews.toml", []byte(automationBase+"[mqtt]\n"+tc.body+"\n"))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestMQTTPasswordFileChecked(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	testutil.WriteFile(t, empty, nil, 0o600)
	for _, tc := range []struct{ file, want string }{
		{filepath.Join(dir, "missing"), "cannot read the password"},
		{empty, "is empty"},
	} {
		base := strings.Replace(automationBase, "name = \"ews1\"\n", "name = \"ews1\"\nsecrets_dir = \""+dir+"\"\n", 1) // the file may be read from there
		cfg, err := Parse("ews.toml", []byte(base+"[mqtt]\nbroker = \"h:1\"\nuser = \"u\"\npassword_file = \""+tc.file+"\"\n"))
		if err != nil {
			t.Fatal(err)
		}
		errs, _ := cfg.CheckSecrets()
		if len(errs) != 1 || !strings.Contains(errs[0].Error(), "mqtt.password_file: ") || !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.file, errs, tc.want)
		}
	}
}
