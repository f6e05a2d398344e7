package bootconf

import (
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/config/configtest"
	"github.com/ews-firmware/ews/sched"
)

// checkProblems is every problem `ews config check` finds in doc's file
// alone (config.ParseAll and CheckConfig), in line order.
func checkProblems(t *testing.T, doc string) config.Errors {
	t.Helper()
	_, errs := parseAllConfig("ews.toml", []byte(doc))
	return errs
}

// TestFiveMistakes: five different mistakes, all
// five listed, in line order.
func TestFiveMistakes(t *testing.T) {
	doc := `[node]
name = "ews1"
capacty = 4
weight = "heavy"

[cluster]
tmax = "abc"

[sched]
policy = "fastest"

[[device]]
name = "relay1"
driver = "sim-switch"

[[device]]
name = "relay1"
driver = "sim-switch"
`
	errs := checkProblems(t, doc)
	configtest.Problems(t, errs, []configtest.Want{
		{Line: 3, Key: "node.capacty", Msg: `unknown key; did you mean "capacity"?`},
		{Line: 4, Key: "node.weight", Msg: "want an integer, got a string"},
		{Line: 7, Key: "cluster.tmax", Msg: `want a duration such as "500ms", got "abc"`},
		{Line: 10, Key: "sched.policy", Msg: `unknown policy "fastest"`},
		{Line: 17, Key: "device[1].name", Msg: `duplicate device name "relay1" (first defined on line 13)`},
	})
	for i, e := range errs {
		if e.File != "ews.toml" {
			t.Errorf("problem %d has file %q", i+1, e.File)
		}
	}
}

// TestRestoreKey: [[device]] restore is checked with its file:line, and
// the default follows the driver (hal.RestoreMode).
func TestRestoreKey(t *testing.T) {
	cases := []struct {
		name, device, want string // want: "" = valid
	}{
		{"last on a relay", "driver = \"sim-switch\"\nrestore = \"last\"", ""},
		{"initial on a relay", "driver = \"sim-switch\"\nrestore = \"initial\"", ""},
		{"a bad word", "driver = \"sim-switch\"\nrestore = \"sometimes\"", `ews.toml:9: device[0].restore: device "d": "sometimes": want last or initial`},
		{"last on a sensor", "driver = \"sim-sensor\"\nrestore = \"last\"", "ews.toml:9: device[0].restore: device \"d\": driver sim-sensor has no state to restore"},
		{"last on a shared device", "driver = \"sim-switch\"\nnode = \"any\"\nrestore = \"last\"", "ews.toml:10: device[0].restore"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc := "[node]\nname = \"ews1\"\n[sim]\n\n\n[[device]]\nname = \"d\"\n" + c.device + "\n"
			errs := checkProblems(t, doc)
			if c.want == "" {
				if len(errs) != 0 {
					t.Fatalf("valid config refused: %v", errs)
				}
				return
			}
			if len(errs) != 1 || !strings.Contains(errs[0].Error(), c.want) {
				t.Fatalf("errors %v, want one containing %q", errs, c.want)
			}
		})
	}
}

// What the packages the config maps onto refuse is reported like what
// config refuses: file, line, key.
func TestCheckedWithTheLine(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		line     int
		key, msg string
	}{
		{"bad headroom", "[sched]\nheadroom = \"lots\"\n", 2, "sched.headroom", "want off, auto or a number of slots"},
		{"bad stale", "[sched]\nstale = \"fresh\"\n", 2, "sched.stale", "want placed, two or reported"},
		{"bad order", "[sched]\norder = \"fifo\"\n", 2, "sched.order", "want priority or arrival"},
		{"unknown driver", "[[device]]\nname = \"a\"\ndriver = \"laser\"\n", 3, "device[0].driver", "unknown driver"},
		{"unknown policy", "[sched]\npolicy = \"fastest\"\n", 2, "sched.policy", "unknown policy"},
		{"bad class rule", "[[sched.class]]\nname = \"c\"\nmatch = [\"get /x\"]\n", 3, "sched.class[0].match", "method must be upper case"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseConfig("/boot/ews.toml", []byte(tt.doc))
			configtest.Refused(t, err, "/boot/ews.toml", configtest.Want{Line: tt.line, Key: tt.key, Msg: tt.msg})
		})
	}
}

// [history] is config's to check, a device's poll hal's: one list, in line order.
func TestHistoryAndPollRefused(t *testing.T) {
	errs := checkProblems(t, `[node]
name = "ews1"
[history]
flush = "10ms"
keep = "1h"
max_mb = 0
[[device]]
name = "r1"
driver = "sim-switch"
poll = "5s"
[[device]]
name = "t1"
driver = "sim-sensor"
poll = "1ms"
`)
	configtest.Problems(t, errs, []configtest.Want{
		{Line: 4, Key: "history.flush", Msg: "at least 1s"},
		{Line: 5, Key: "history.keep", Msg: "shorter than history.full"},
		{Line: 6, Key: "history.max_mb", Msg: "want 1..65536"},
		{Line: 10, Key: "device[0].poll", Msg: "not polled"},
		{Line: 14, Key: "device[1].poll", Msg: "too often"},
	})
}

// What `ews config init` prints passes every check, the packages' too.
func TestExampleIsChecked(t *testing.T) {
	if _, err := parseConfig("example.toml", []byte(config.Example(sched.PolicyNames()...))); err != nil {
		t.Fatalf("config init output does not pass check: %v", err)
	}
}
