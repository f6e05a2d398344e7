package bootconf

import (
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// automationBase is the board the rule tests add rules to.
const automationBase = testutil.RulesBoard

func TestRulesParse(t *testing.T) {
	cfg, err := parseConfig("ews.toml", []byte(automationBase+`
[[rule]]
when = "button1 pressed"
then = "pump1 toggle"
[[rule]]
at = "07:30"
then = "pump1 turn_on for 5m"
[[rule]]
at = "23:59:30"
then = "pump1 turn_off"
[[rule]]
when = "temp1 above 30.5"
then = "pump1 pulse 200"
`))
	if err != nil {
		t.Fatal(err)
	}
	rs := ruleList(cfg)
	if len(rs) != 4 {
		t.Fatalf("rules = %+v", rs)
	}
	if rs[0].When == nil || rs[0].When.Event != "pressed" || rs[0].Then.Action != hal.Toggle {
		t.Errorf("rule 0 = %+v", rs[0])
	}
	if rs[1].When != nil || rs[1].At != 7*time.Hour+30*time.Minute || rs[1].Then.For != 5*time.Minute || rs[1].Then.Back() != hal.TurnOff {
		t.Errorf("rule 1 = %+v", rs[1])
	}
	if rs[2].At != 23*time.Hour+59*time.Minute+30*time.Second {
		t.Errorf("rule 2 = %+v", rs[2])
	}
	if rs[3].When.Threshold != 30.5 || rs[3].Then.Pulse != 200*time.Millisecond {
		t.Errorf("rule 3 = %+v", rs[3])
	}
}

func TestRulesRefused(t *testing.T) {
	for _, tc := range []struct{ name, rule, want string }{
		{"unknown device", "when = \"nope pressed\"\nthen = \"pump1 toggle\"", "rule[0].when: unknown device \"nope\""},
		{"bad event", "when = \"button1 wiggled\"\nthen = \"pump1 toggle\"", "unknown event \"wiggled\""},
		{"bad action", "when = \"button1 pressed\"\nthen = \"pump1 explode\"", "rule[0].then: \"pump1 explode\": unknown action"},
		{"bad time", "at = \"25:00\"\nthen = \"pump1 toggle\"", "rule[0].at: \"25:00\" is not a time of day"},
		{"both", "at = \"07:00\"\nwhen = \"button1 pressed\"\nthen = \"pump1 toggle\"", "when or at, not both"},
		{"neither", "then = \"pump1 toggle\"", "needs when"},
		{"sensor takes no action", "when = \"button1 pressed\"\nthen = \"temp1 turn_on\"", "does not take turn_on"},
		{"numeric on a button", "when = \"button1 above 3\"\nthen = \"pump1 toggle\"", "no numeric value"},
		{"for with pulse", "when = \"button1 pressed\"\nthen = \"pump1 pulse 100 for 5m\"", "\"for\" goes with"},
		{"bad duration", "when = \"button1 pressed\"\nthen = \"pump1 turn_on for soon\"", "not a duration"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := automationBase + "[[rule]]\n" + tc.rule + "\n"
			_, err := parseConfig("ews.toml", []byte(src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), "ews.toml:1") { // lines 15-17 hold the rule: file and line named
				t.Fatalf("err = %v, want file and line", err)
			}
		})
	}
}
