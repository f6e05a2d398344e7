package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/mqtt/mqtttest"
)

const e2eToken = "mqtt-e2e-token"

// deviceState asks board b for a device's state through the API (the queue).
func deviceState(b *board, name string) string {
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + b.http + "/api/devices/" + name)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var s struct {
		State string `json:"state"`
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&s) != nil {
		return ""
	}
	return s.State
}

// answeredState waits for board b to answer with a device's state (a
// request can time out on a loaded machine) and returns it.
func answeredState(t *testing.T, b *board, name string) string {
	t.Helper()
	var s string
	testutil.EventuallyWithin(t, b.name+" answers "+name+"'s state", 10*time.Second, func() bool {
		s = deviceState(b, name)
		return s != ""
	})
	return s
}

func press(t *testing.T, b *board, name string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, "http://"+b.http+"/api/devices/"+name+"/pulse?ms=50", nil)
	req.Header.Set("Authorization", "Bearer "+e2eToken)
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("press %s: %s", name, resp.Status)
	}
}

// TestMQTTAndRulesSurviveTheMaster runs 3 real boards against a real
// mosquitto: Home Assistant discovery, an MQTT command toggling a relay on
// another board, a rule and a timer; then kill -9 of the master, after
// which the new master republishes, takes commands, fires rules and
// timers (without firing the old master's timer twice); then kill -9 of a
// board, whose availability goes offline.
func TestMQTTAndRulesSurviveTheMaster(t *testing.T) {
	beside(t, "starts real ews processes and mosquitto")
	broker := mqtttest.Broker(t)
	bin := ewsBinary(t)
	boards, _ := layout(t, 3)
	// Timers a few seconds ahead: the first fires on ews1, the second after
	// ews1 was killed. Both toggle, so a timer run twice would show.
	now := time.Now()
	t1, t2 := now.Add(12*time.Second), now.Add(30*time.Second)
	boardTOML{node: "capacity = 2\n", cluster: "tmax = \"1s\"\ntthreshold = \"1s\"\nheartbeat = \"100ms\"\n", rest: fmt.Sprintf(`[http]
auth = "token"
token = %q
[sim]
[mqtt]
broker = %q
prefix = "e2e"
discovery = true
[[device]]
name = "relay1"
driver = "sim-switch"
node = "ews2"
[[device]]
name = "lamp1"
driver = "sim-switch"
node = "ews2"
[[device]]
name = "button1"
driver = "sim-button"
node = "ews3"
[[device]]
name = "pump1"
driver = "sim-switch"
node = "ews3"
[[device]]
name = "pump2"
driver = "sim-switch"
node = "ews3"
[[rule]]
when = "button1 pressed"
then = "lamp1 toggle"
[[rule]]
at = %q
then = "pump1 toggle"
[[rule]]
at = %q
then = "pump2 toggle"
`, e2eToken, strings.TrimPrefix(broker, "tcp://"), t1.Format("15:04:05"), t2.Format("15:04:05"))}.write(t, boards)
	rec := mqtttest.Listen(t, broker, "#")
	startAll(t, bin, boards)
	waitAgree(t, "ews1 master on every board", 20*time.Second, boards, "ews1", 1)
	v1 := boards[0].mustView(t)

	is := func(topic, want string) func() bool {
		return func() bool { got, _ := rec.Last(topic); return got == want }
	}
	for _, topic := range []string{"e2e/status", "e2e/board/ews1/status", "e2e/board/ews2/status", "e2e/board/ews3/status"} {
		testutil.EventuallyWithin(t, topic+" online", 10*time.Second, is(topic, "online"))
	}
	var disc map[string]any
	testutil.EventuallyWithin(t, "discovery of relay1", 10*time.Second, func() bool {
		p, ok := rec.Last("homeassistant/switch/e2e/relay1/config")
		return ok && json.Unmarshal([]byte(p), &disc) == nil
	})
	if disc["command_topic"] != "e2e/relay1/set" || disc["state_topic"] != "e2e/relay1/state" || disc["unique_id"] != "e2e_relay1" {
		t.Fatalf("relay1 discovery: %v", disc)
	}
	// each device's discovery is its own message: button1's may come after relay1's
	testutil.EventuallyWithin(t, "binary_sensor discovery of button1", 10*time.Second, func() bool {
		_, ok := rec.Last("homeassistant/binary_sensor/e2e/button1/config")
		return ok
	})
	testutil.EventuallyWithin(t, "relay1 state published", 10*time.Second, is("e2e/relay1/state", "OFF"))

	// An MQTT command, received by the master ews1, toggles a relay on ews2.
	sent := time.Now()
	rec.Publish(t, "e2e/relay1/set", "ON")
	testutil.EventuallyWithin(t, "relay1 ON on MQTT", 10*time.Second, is("e2e/relay1/state", "ON"))
	t.Logf("MQTT command to state on MQTT (master ews1, relay on ews2, polled every 5 ms): %v", time.Since(sent).Round(time.Millisecond))
	if s := answeredState(t, boards[1], "relay1"); s != "on" {
		t.Fatalf("relay1 on ews2 is %q", s)
	}

	// A rule: button1 on ews3 pressed -> lamp1 on ews2 toggles. The master
	// sees a press once it follows ews3's stream; one before that reaches
	// it only as the state at connect, "off" (devsync has no replay). The
	// master may dispatch to ews3 before then: wait, as a user does not
	// press a button in the first second of a cluster's life.
	boards[0].waitLog(t, `devsync: board stream connected" board=ews3`, 10*time.Second)
	press(t, boards[2], "button1")
	testutil.EventuallyWithin(t, "rule toggled lamp1 on", 10*time.Second, is("e2e/lamp1/state", "ON"))

	// The first timer, on ews1.
	testutil.EventuallyWithin(t, "timer 1 toggled pump1 on", time.Until(t1)+15*time.Second, is("e2e/pump1/state", "ON"))
	boards[0].waitLog(t, "rules: timer fired", 5*time.Second)

	// kill -9 of the master: the broker publishes its will, ews2 takes over
	// and publishes online again, ews1 goes offline.
	before := len(rec.History("e2e/status"))
	killed := time.Now()
	boards[0].kill9()
	waitAgree(t, "takeover by ews2", 10*time.Second, boards[1:], "ews2", v1.Epoch+1)
	testutil.EventuallyWithin(t, "ews1 offline", 10*time.Second, is("e2e/board/ews1/status", "offline"))
	testutil.EventuallyWithin(t, "the master's will (offline), then online from ews2", 10*time.Second, func() bool {
		h := rec.History("e2e/status")[before:]
		return len(h) >= 2 && h[0] == "offline" && h[len(h)-1] == "online"
	})
	t.Logf("kill -9 of the master to e2e/status offline, online again and ews1 offline (tmax 1s): %v", time.Since(killed).Round(time.Millisecond))
	boards[1].waitLog(t, "mqtt: connected", 5*time.Second)

	// Commands, rules and timers work under the new master.
	rec.Publish(t, "e2e/relay1/set", "OFF")
	testutil.EventuallyWithin(t, "relay1 OFF after takeover", 10*time.Second, is("e2e/relay1/state", "OFF"))
	boards[1].waitLog(t, `devsync: board stream connected" board=ews3`, 5*time.Second)
	press(t, boards[2], "button1")
	testutil.EventuallyWithin(t, "rule toggled lamp1 off after takeover", 10*time.Second, is("e2e/lamp1/state", "OFF"))
	testutil.EventuallyWithin(t, "timer 2 toggled pump2 on under ews2", time.Until(t2)+15*time.Second, is("e2e/pump2/state", "ON"))
	boards[1].waitLog(t, "rules: timer fired", 5*time.Second)
	// ews2 caught up timer 1 (its time was within a minute) with the same
	// key: answered from ews3's memory, pump1 was not toggled back off.
	if s := answeredState(t, boards[1], "pump1"); s != "on" {
		t.Fatalf("pump1 is %q: timer 1 ran twice", s)
	}

	for _, l := range strings.Split(boards[1].log.String(), "\n") {
		if strings.Contains(l, "rules:") || strings.Contains(l, "mqtt:") {
			t.Logf("ews2: %s", l)
		}
	}

	// A board that dies goes offline.
	boards[2].kill9()
	testutil.EventuallyWithin(t, "ews3 offline", 10*time.Second, is("e2e/board/ews3/status", "offline"))
}
