package bootconf

import (
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

// Each section's defaults, as the Settings page shows them, is valid TOML
// for the store and says what the boards run with when the store holds
// none of it: parsed back, it equals the defaults.
func TestSectionDefaults(t *testing.T) {
	d := SectionDefaults()
	var all strings.Builder
	for _, s := range []string{"rule", "sched", "mqtt", "history"} {
		if d[s] == "" {
			t.Errorf("no defaults for [%s]", s)
		}
		all.WriteString(d[s])
	}
	got, errs := config.ParseAll("defaults.toml", []byte("[node]\nname = \"ews1\"\n"+all.String()))
	if len(errs) > 0 {
		t.Fatalf("the defaults do not parse: %v\n%s", errs, all.String())
	}
	want := config.DefaultConfig()
	if got.Sched.Policy != want.Sched.Policy || got.Sched.Mode != want.Sched.Mode || got.Sched.Queue != want.Sched.Queue ||
		got.Sched.QueueTimeout != want.Sched.QueueTimeout || got.Sched.QueueTarget != want.Sched.QueueTarget || got.Sched.Headroom != want.Sched.Headroom {
		t.Errorf("[sched] %+v, want the defaults %+v", got.Sched, want.Sched)
	}
	if len(got.Sched.Classes) != 2 || got.Sched.Classes[0].Name != "control" {
		t.Errorf("classes %+v", got.Sched.Classes)
	}
	if got.History != want.History {
		t.Errorf("[history] %+v, want %+v", got.History, want.History)
	}
	if got.MQTT != nil && got.MQTT.Broker != "" || len(got.Rules) != 0 {
		t.Errorf("mqtt %+v, %d rules: want none", got.MQTT, len(got.Rules))
	}
}
