package mqtt

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/state"
)

// Home Assistant's documented discovery keys (Configuration Variables of
// https://www.home-assistant.io/integrations/switch.mqtt/, light.mqtt/
// (default schema), binary_sensor.mqtt/, sensor.mqtt/; device and origin
// from https://www.home-assistant.io/integrations/mqtt/#discovery-messages),
// the ones a payload of ours may use. A key not listed is one Home
// Assistant would reject ("extra keys not allowed").
var (
	haCommon = []string{"name", "unique_id", "availability", "availability_mode", "availability_topic",
		"payload_available", "payload_not_available", "device", "origin", "icon", "qos", "enabled_by_default",
		"entity_category", "json_attributes_topic", "value_template", "encoding"}
	haKeys = map[string][]string{
		Switch:       {"command_topic", "state_topic", "payload_on", "payload_off", "state_on", "state_off", "optimistic", "retain", "device_class"},
		Light:        {"command_topic", "state_topic", "payload_on", "payload_off", "brightness_command_topic", "brightness_state_topic", "brightness_scale", "on_command_type", "optimistic", "retain"},
		BinarySensor: {"state_topic", "payload_on", "payload_off", "device_class", "off_delay", "expire_after", "force_update"},
		Sensor:       {"state_topic", "unit_of_measurement", "device_class", "state_class", "expire_after", "force_update", "suggested_display_precision"},
	}
	haRequired = map[string][]string{Switch: {"command_topic"}, Light: {"command_topic"}, BinarySensor: {"state_topic"}, Sensor: {"state_topic"}}
	haDevice   = []string{"identifiers", "connections", "name", "manufacturer", "model", "sw_version", "hw_version", "configuration_url", "suggested_area", "via_device"}
	haOrigin   = []string{"name", "sw_version", "support_url"}
)

var topics = Topics{Prefix: "ews", Discovery: "homeassistant"}

func TestDiscoveryComponentPerDriver(t *testing.T) {
	for _, tc := range []struct {
		driver, want string
	}{
		{"gpio-out", Switch}, {"sim-switch", Switch}, {"modbus-coil", Switch}, {"command", Switch},
		{"pwm", Light}, {"sim-pwm", Light},
		{"gpio-in", BinarySensor}, {"sim-button", BinarySensor},
		{"sim-sensor", Sensor}, {"ds18b20", Sensor}, {"bmxx80", Sensor}, {"modbus-register", Sensor},
	} {
		d, ok := hal.LookupDriver(tc.driver)
		if !ok {
			t.Fatalf("driver %s not registered", tc.driver)
		}
		if got := ComponentOf(d); got != tc.want {
			t.Errorf("%s: component %s, want %s", tc.driver, got, tc.want)
		}
	}
	for _, name := range hal.DriverNames() { // a new driver gets a component without a change here
		d, _ := hal.LookupDriver(name)
		if _, ok := haKeys[ComponentOf(d)]; !ok {
			t.Errorf("%s: component %q has no schema", name, ComponentOf(d))
		}
	}
}

func TestDiscoveryPayloadsUseDocumentedKeys(t *testing.T) {
	snaps := []hal.Snapshot{
		{Name: "relay1", Driver: "gpio-out", Node: "ews2", State: hal.StateOn, Value: true},
		{Name: "led1", Driver: "sim-pwm", Node: "ews1", State: hal.StateOn, Value: 40.0, Unit: "%"},
		{Name: "button1", Driver: "sim-button", Node: "ews3", State: hal.StateOff, Value: false},
		{Name: "temp1", Driver: "ds18b20", Node: "any", State: hal.StateOK, Value: 21.5, Unit: "°C"},
		{Name: "env1", Driver: "bmxx80", Node: "ews1", State: hal.StateOK, Value: 20.0, Unit: "°C", Values: map[string]hal.Quantity{
			"temperature": {Value: 20, Unit: "°C"}, "humidity": {Value: 40, Unit: "%"}, "pressure": {Value: 1013, Unit: "hPa"}}},
	}
	seen := map[string]bool{}
	for _, s := range snaps {
		for _, e := range Entities(s) {
			topic := topics.ConfigTopic(e)
			if seen[topic] {
				t.Fatalf("two entities on %s", topic)
			}
			seen[topic] = true
			b, err := json.Marshal(topics.Config(e, "1.2.3"))
			if err != nil {
				t.Fatal(err)
			}
			var c map[string]any
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatal(err)
			}
			allowed := append(slices.Clone(haCommon), haKeys[e.Component]...)
			for k := range c {
				if !slices.Contains(allowed, k) {
					t.Errorf("%s: key %q is not in Home Assistant's %s schema", topic, k, e.Component)
				}
			}
			for _, k := range append([]string{"name", "unique_id", "device", "availability"}, haRequired[e.Component]...) {
				if _, ok := c[k]; !ok {
					t.Errorf("%s: missing %q", topic, k)
				}
			}
			for k := range c["device"].(map[string]any) {
				if !slices.Contains(haDevice, k) {
					t.Errorf("%s: device key %q undocumented", topic, k)
				}
			}
			for k := range c["origin"].(map[string]any) {
				if !slices.Contains(haOrigin, k) {
					t.Errorf("%s: origin key %q undocumented", topic, k)
				}
			}
			if ids := c["device"].(map[string]any)["identifiers"].([]any); len(ids) != 1 {
				t.Errorf("%s: identifiers %v", topic, ids)
			}
		}
	}
	want := []string{
		"homeassistant/switch/ews/relay1/config", "homeassistant/light/ews/led1/config",
		"homeassistant/binary_sensor/ews/button1/config", "homeassistant/sensor/ews/temp1/config",
		"homeassistant/sensor/ews/env1_humidity/config", "homeassistant/sensor/ews/env1_pressure/config",
		"homeassistant/sensor/ews/env1_temperature/config",
	}
	for _, w := range want {
		if !seen[w] {
			t.Errorf("no discovery config on %s (have %v)", w, seen)
		}
	}
}

func TestDiscoveryValues(t *testing.T) {
	env := hal.Snapshot{Name: "env1", Driver: "bmxx80", Node: "ews1", State: hal.StateOK, Values: map[string]hal.Quantity{
		"temperature": {Value: 20, Unit: "°C"}, "humidity": {Value: 40, Unit: "%"}, "pressure": {Value: 1013, Unit: "hPa"}}}
	for _, e := range Entities(env) {
		c := topics.Config(e, "v")
		if c["device_class"] != e.Quantity || c["unit_of_measurement"] != env.Values[e.Quantity].Unit || c["state_topic"] != "ews/env1/"+e.Quantity+"/state" {
			t.Errorf("%s: %v", e.Quantity, c)
		}
	}
	for _, tc := range []struct{ q, unit, want string }{
		{"", "°C", "temperature"}, {"", "%", "humidity"}, {"", "hPa", "pressure"}, {"", "V", "voltage"}, {"", "rpm", ""},
	} {
		if got := DeviceClass(tc.q, tc.unit); got != tc.want {
			t.Errorf("DeviceClass(%q, %q) = %q, want %q", tc.q, tc.unit, got, tc.want)
		}
	}
	light := topics.Config(Entity{Component: Light, Device: "led1", Board: "ews1"}, "v")
	if light["brightness_scale"] != 100 || light["brightness_command_topic"] != "ews/led1/brightness/set" {
		t.Errorf("light: %v", light)
	}
	av := topics.Config(Entity{Component: Switch, Device: "relay1", Board: "ews2"}, "v")["availability"].([]map[string]string)
	if len(av) != 2 || av[0]["topic"] != "ews/status" || av[1]["topic"] != "ews/board/ews2/status" {
		t.Errorf("availability: %v", av)
	}
	shared := topics.Config(Entity{Component: Sensor, Device: "t", Board: "any"}, "v")["availability"].([]map[string]string)
	if len(shared) != 1 {
		t.Errorf("a shared device follows the cluster only: %v", shared)
	}
}

func TestStatePayloads(t *testing.T) {
	for _, tc := range []struct {
		s    hal.Snapshot
		want map[string]string
	}{
		{hal.Snapshot{Name: "relay1", Driver: "gpio-out", State: hal.StateOn, Value: true}, map[string]string{"ews/relay1/state": "ON"}},
		{hal.Snapshot{Name: "relay1", Driver: "gpio-out", State: hal.StateOff, Value: false}, map[string]string{"ews/relay1/state": "OFF"}},
		{hal.Snapshot{Name: "led", Driver: "pwm", State: hal.StateOn, Value: 37.5}, map[string]string{"ews/led/state": "ON", "ews/led/brightness": "37.5"}},
		{hal.Snapshot{Name: "t", Driver: "sim-sensor", State: hal.StateOK, Value: 21.25}, map[string]string{"ews/t/state": "21.25"}},
		{hal.Snapshot{Name: "relay1", Driver: "gpio-out", State: hal.StateError}, map[string]string{}},
		{hal.Snapshot{Name: "relay1", Driver: "gpio-out", State: hal.StateRemote}, map[string]string{}},
	} {
		got := topics.StatePayloads(tc.s)
		if len(got) != len(tc.want) {
			t.Errorf("%+v: %v, want %v", tc.s, got, tc.want)
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%+v: %s = %q, want %q", tc.s, k, got[k], v)
			}
		}
	}
	for _, tc := range []struct {
		rs   state.Runstate
		want string
	}{{state.Running, Online}, {state.Overloaded, Online}, {state.Down, Offline}, {state.Joining, Offline}} {
		if got := BoardAvailability(state.Board{Runstate: tc.rs}); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.rs, got, tc.want)
		}
	}
}

func TestParseCommandTopic(t *testing.T) {
	for _, tc := range []struct {
		topic  string
		dev    string
		bright bool
		ok     bool
	}{
		{"ews/relay1/set", "relay1", false, true},
		{"ews/led1/brightness/set", "led1", true, true},
		{"ews/relay1/state", "", false, false},
		{"other/relay1/set", "", false, false},
		{"ews//set", "", false, false},
	} {
		d, b, ok := topics.ParseCommand(tc.topic)
		if d != tc.dev || b != tc.bright || ok != tc.ok {
			t.Errorf("%s: %q %v %v", tc.topic, d, b, ok)
		}
	}
	for _, tc := range []struct {
		payload string
		bright  bool
		want    hal.Kind
		bad     bool
	}{{"ON", false, hal.TurnOn, false}, {"off", false, hal.TurnOff, false}, {"TOGGLE", false, hal.Toggle, false},
		{"55", true, hal.Set, false}, {"lots", true, 0, true}, {"maybe", false, 0, true}} {
		c, err := parseCommand("d", tc.payload, tc.bright)
		if (err != nil) != tc.bad || (!tc.bad && c.Kind != tc.want) {
			t.Errorf("%q: %+v %v", tc.payload, c, err)
		}
	}
}
