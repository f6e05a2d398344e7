package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
)

// drivers is a cluster of a button, a relay and a sensor.
func drivers(name string) (hal.Driver, bool) {
	drv := map[string]string{"button1": "sim-button", "pump1": "sim-switch", "temp1": "sim-sensor"}[name]
	if drv == "" {
		return hal.Driver{}, false
	}
	return hal.LookupDriver(drv)
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name string
		text Text
		want Rule
	}{
		{"event", Text{When: "button1 pressed", Then: "pump1 toggle"},
			Rule{When: &Trigger{Device: "button1", Event: "pressed"}, Then: Step{Device: "pump1", Action: hal.Toggle}}},
		{"timer with a turn-back", Text{At: "07:30", Then: "pump1 turn_on for 5m"},
			Rule{At: 7*time.Hour + 30*time.Minute, Then: Step{Device: "pump1", Action: hal.TurnOn, For: 5 * time.Minute}}},
		{"seconds", Text{At: "23:59:30", Then: "pump1 turn_off"},
			Rule{At: 23*time.Hour + 59*time.Minute + 30*time.Second, Then: Step{Device: "pump1", Action: hal.TurnOff}}},
		{"threshold and pulse", Text{When: "temp1 above 30.5", Then: "pump1 pulse 200"},
			Rule{When: &Trigger{Device: "temp1", Event: "above", Threshold: 30.5}, Then: Step{Device: "pump1", Action: hal.Pulse, Pulse: 200 * time.Millisecond}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, errs := Parse(3, tc.text, drivers)
			if len(errs) != 0 {
				t.Fatal(errs)
			}
			if r.Index != 3 || r.At != tc.want.At || r.Then != tc.want.Then || (r.When == nil) != (tc.want.When == nil) || (r.When != nil && *r.When != *tc.want.When) {
				t.Fatalf("Parse = %+v (when %+v), want %+v (when %+v)", r, r.When, tc.want, tc.want.When)
			}
		})
	}
}

func TestParseRefused(t *testing.T) {
	for _, tc := range []struct {
		name      string
		text      Text
		key, want string
	}{
		{"unknown device", Text{When: "nope pressed", Then: "pump1 toggle"}, "when", `unknown device "nope"`},
		{"bad event", Text{When: "button1 wiggled", Then: "pump1 toggle"}, "when", `unknown event "wiggled"`},
		{"bad action", Text{When: "button1 pressed", Then: "pump1 explode"}, "then", `"pump1 explode": unknown action`},
		{"bad time", Text{At: "25:00", Then: "pump1 toggle"}, "at", `"25:00" is not a time of day`},
		{"both", Text{At: "07:00", When: "button1 pressed", Then: "pump1 toggle"}, "at", "when or at, not both"},
		{"neither", Text{Then: "pump1 toggle"}, "", "needs when"},
		{"sensor takes no action", Text{When: "button1 pressed", Then: "temp1 turn_on"}, "then", "does not take turn_on"},
		{"numeric on a button", Text{When: "button1 above 3", Then: "pump1 toggle"}, "when", "no numeric value"},
		{"event on a sensor", Text{When: "temp1 pressed", Then: "pump1 toggle"}, "when", "is a sensor"},
		{"for with pulse", Text{When: "button1 pressed", Then: "pump1 pulse 100 for 5m"}, "then", `"for" goes with`},
		{"bad duration", Text{When: "button1 pressed", Then: "pump1 turn_on for soon"}, "then", "not a duration"},
		{"pulse too long", Text{When: "button1 pressed", Then: "pump1 pulse 1e9"}, "then", "pulse of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := Parse(0, tc.text, drivers)
			for _, e := range errs {
				if e.Key == tc.key && strings.Contains(e.Err.Error(), tc.want) {
					return
				}
			}
			t.Fatalf("errors %v, want one at %q with %q", errs, tc.key, tc.want)
		})
	}
}
