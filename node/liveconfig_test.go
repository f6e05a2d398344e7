//go:build !lite

package node

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// Each version of the store is applied while the board runs
// (docs/NOTES.md "Configuration store"): devices added, changed and
// removed without a restart, rules and the scheduler's policy at once,
// and what needs a restart named in the answer.
func TestConfigAppliedLive(t *testing.T) {
	n, base, _, _ := startNode(t, accountsConfig(t))
	testutil.Eventually(t, "the store seeded", func() bool {
		code, _, _ := do(t, "GET", base+"/api/config", "", bearer)
		return code == http.StatusOK
	})
	const seed = "[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\n[[device]]\nname = \"led1\"\ndriver = \"sim-switch\"\n"
	const fan = "\n[[device]]\nname = \"fan\"\ndriver = \"sim-switch\"\nmax_age = \"0s\"\n"
	const btn = "\n[[device]]\nname = \"btn\"\ndriver = \"sim-button\"\nmax_age = \"0s\"\n"
	tests := []struct {
		name    string
		text    string
		restart string // the answer's restart_needed
		check   func() bool
	}{
		{"add a device", seed + fan, `[]`, func() bool {
			code, _, body := do(t, "POST", base+"/api/devices/fan/toggle", "", bearer)
			return code == http.StatusOK && strings.Contains(body, `"state":"on"`)
		}},
		{"change it", seed + strings.Replace(fan, `max_age = "0s"`, "max_age = \"0s\"\nunits = \"rpm\"", 1), `[]`, func() bool {
			code, _, body := do(t, "GET", base+"/api/devices/fan", "", bearer)
			return code == http.StatusOK && strings.Contains(body, `"unit":"rpm"`) && strings.Contains(body, `"state":"off"`) // reopened
		}},
		{"remove it", seed, `[]`, func() bool {
			code, _, _ := do(t, "GET", base+"/api/devices/fan", "", bearer)
			return code == http.StatusNotFound
		}},
		{"a rule", seed + btn + "\n[[rule]]\nwhen = \"btn pressed\"\nthen = \"relay1 toggle\"\n", `[]`, func() bool {
			_, engine, rules := n.clu.auto.Running()
			return engine && rules == 1
		}},
		{"no rule", seed + btn, `[]`, func() bool {
			_, engine, rules := n.clu.auto.Running()
			return !engine && rules == 0
		}},
		{"the policy", seed + btn + "\n[sched]\npolicy = \"rr\"\n", `[]`, func() bool {
			d := n.web.front.Dispatcher()
			_, _, v := getJSON(t, "GET", base+"/api/cluster", nil, nil)
			return d != nil && fmt.Sprintf("%T", d.Policy()) == "*sched.RR" && v["policy"] == "rr"
		}},
		{"mode needs a restart", seed + btn + "\n[sched]\npolicy = \"rr\"\nmode = \"redirect\"\n", `["sched.mode"]`, func() bool { return true }},
	}
	if code, _, body := do(t, "GET", base+"/api/config/drivers", "", bearer); code != http.StatusOK || !strings.Contains(body, `"name":"sim-switch"`) || !strings.Contains(body, `"key":"on_stop"`) {
		t.Errorf("drivers: %d %.300s", code, body)
	}
	version := 1
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := map[string]string{"Authorization": bearer["Authorization"], "If-Match": `"` + strconv.Itoa(version) + `"`}
			code, _, body := do(t, "PUT", base+"/api/config", tt.text, hdr)
			if code == http.StatusOK {
				version++
			}
			if code != http.StatusOK || !strings.Contains(body, `"restart_needed":`+tt.restart) {
				t.Fatalf("PUT: %d %s, want restart_needed %s", code, body, tt.restart)
			}
			testutil.Eventually(t, tt.name+" applied", tt.check)
			testutil.Eventually(t, "the board's status at the version", func() bool {
				_, _, st := getJSON(t, "GET", base+"/api/config/status", nil, bearer)
				bs, _ := st["boards"].([]any)
				return len(bs) == 1 && bs[0].(map[string]any)["version"] == float64(version)
			})
		})
	}
}
