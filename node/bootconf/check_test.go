package bootconf

import (
	"errors"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
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
	want := []struct {
		line     int
		key, msg string
	}{
		{3, "node.capacty", `unknown key; did you mean "capacity"?`},
		{4, "node.weight", "want an integer, got a string"},
		{7, "cluster.tmax", `want a duration such as "500ms", got "abc"`},
		{10, "sched.policy", `unknown policy "fastest"`},
		{17, "device[1].name", `duplicate device name "relay1" (first defined on line 13)`},
	}
	errs := checkProblems(t, doc)
	if len(errs) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(errs), len(want), errs)
	}
	for i, w := range want {
		e := errs[i]
		if e.Line != w.line || e.Key != w.key || !strings.Contains(e.Msg, w.msg) {
			t.Errorf("problem %d = %v, want line %d %s: %s", i+1, e, w.line, w.key, w.msg)
		}
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
			if err == nil {
				t.Fatal("accepted")
			}
			var es config.Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %T %v is not config.Errors", err, err)
			}
			var hit *config.Error
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
	want := []struct {
		line     int
		key, msg string
	}{
		{4, "history.flush", "at least 1s"},
		{5, "history.keep", "shorter than history.full"},
		{6, "history.max_mb", "want 1..65536"},
		{10, "device[0].poll", "not polled"},
		{14, "device[1].poll", "too often"},
	}
	if len(errs) != len(want) {
		t.Fatalf("got %d problems, want %d:\n%v", len(errs), len(want), errs)
	}
	for i, w := range want {
		e := errs[i]
		if e.Line != w.line || e.Key != w.key || !strings.Contains(e.Msg, w.msg) {
			t.Errorf("problem %d = %v, want line %d %s: %s", i+1, e, w.line, w.key, w.msg)
		}
	}
}

// What `ews config init` prints passes every check, the packages' too.
func TestExampleIsChecked(t *testing.T) {
	if _, err := parseConfig("example.toml", []byte(config.Example(sched.PolicyNames()...))); err != nil {
		t.Fatalf("config init output does not pass check: %v", err)
	}
}
