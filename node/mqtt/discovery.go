package mqtt

import (
	"maps"
	"slices"
	"strings"

	"github.com/ews-firmware/ews/hal"
)

// Home Assistant components a device appears as.
const (
	Switch       = "switch"
	Light        = "light"
	BinarySensor = "binary_sensor"
	Sensor       = "sensor"
)

// Entity is one Home Assistant entity of a device: a device is one entity,
// a multi-quantity sensor (BME280) one per quantity.
type Entity struct {
	Component string
	Device    string // the ews device name
	Board     string // the board it is wired to ("any": shared)
	Quantity  string // "" or the key of Snapshot.Values
	Unit      string
}

// ComponentOf says which component a driver's device is, from what the
// driver registered: an output that takes set but no pulse holds a level
// (pwm) and is a dimmable light; any other output is a switch; a polled
// input is a sensor; any other input is a binary sensor.
func ComponentOf(d hal.Driver) string {
	switch {
	case d.Output && d.Accepts(hal.Set) && !d.Accepts(hal.Pulse):
		return Light
	case d.Output:
		return Switch
	case d.Polled:
		return Sensor
	}
	return BinarySensor
}

// Entities lists the entities of a device as its snapshot shows it; an
// unknown driver has none.
func Entities(s hal.Snapshot) []Entity {
	d, ok := hal.LookupDriver(s.Driver)
	if !ok {
		return nil
	}
	c := ComponentOf(d)
	if c == Sensor && len(s.Values) > 1 {
		var out []Entity
		for _, q := range slices.Sorted(maps.Keys(s.Values)) {
			out = append(out, Entity{Component: c, Device: s.Name, Board: s.Node, Quantity: q, Unit: s.Values[q].Unit})
		}
		return out
	}
	return []Entity{{Component: c, Device: s.Name, Board: s.Node, Unit: s.Unit}}
}

// DeviceClass is Home Assistant's sensor device class for a quantity or
// unit ("" when none fits).
func DeviceClass(quantity, unit string) string {
	switch quantity {
	case "temperature", "humidity", "pressure":
		return quantity
	}
	switch unit {
	case "°C", "°F", "K":
		return "temperature"
	case "%", "%RH":
		return "humidity"
	case "hPa", "Pa", "kPa", "bar", "mbar", "psi":
		return "pressure"
	case "V", "mV":
		return "voltage"
	case "A", "mA":
		return "current"
	case "W", "kW":
		return "power"
	case "lx":
		return "illuminance"
	}
	return ""
}

// ID is a name made safe for a topic level and a unique_id.
func ID(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
			return r
		}
		return '_'
	}, s)
}

// objectID names the entity among the cluster's: the device, plus the quantity.
func (e Entity) objectID() string {
	if e.Quantity != "" {
		return ID(e.Device + "_" + e.Quantity)
	}
	return ID(e.Device)
}

// ConfigTopic is where the entity's discovery config is published:
// <discovery_prefix>/<component>/<node_id>/<object_id>/config.
func (t Topics) ConfigTopic(e Entity) string {
	return t.Discovery + "/" + e.Component + "/" + ID(t.Prefix) + "/" + e.objectID() + "/config"
}

// Config is the entity's discovery payload (Home Assistant's MQTT
// discovery, abbreviations not used so it reads plainly).
func (t Topics) Config(e Entity, swVersion string) map[string]any {
	name := e.Device
	if e.Quantity != "" {
		name = e.Device + " " + e.Quantity
	}
	avail := []map[string]string{{"topic": t.Status()}}
	if e.Board != "" && e.Board != "any" {
		avail = append(avail, map[string]string{"topic": t.BoardStatus(e.Board)})
	}
	board := e.Board
	if board == "" || board == "any" {
		board = "cluster"
	}
	c := map[string]any{
		"name":                  name,
		"unique_id":             ID(t.Prefix) + "_" + e.objectID(),
		"availability":          avail,
		"availability_mode":     "all",
		"payload_available":     Online,
		"payload_not_available": Offline,
		"device": map[string]any{
			"identifiers":  []string{ID(t.Prefix) + "_" + ID(board)},
			"name":         t.Prefix + " " + board,
			"manufacturer": "ews",
			"model":        "ews board",
			"sw_version":   swVersion,
		},
		"origin": map[string]any{"name": "ews", "sw_version": swVersion},
	}
	switch e.Component {
	case Switch:
		c["state_topic"] = t.State(e.Device, "")
		c["command_topic"] = t.Command(e.Device)
		c["payload_on"], c["payload_off"] = On, Off
		c["state_on"], c["state_off"] = On, Off
	case Light:
		c["state_topic"] = t.State(e.Device, "")
		c["command_topic"] = t.Command(e.Device)
		c["payload_on"], c["payload_off"] = On, Off
		c["brightness_state_topic"] = t.Brightness(e.Device)
		c["brightness_command_topic"] = t.BrightnessCommand(e.Device)
		c["brightness_scale"] = 100
		c["on_command_type"] = "last"
	case BinarySensor:
		c["state_topic"] = t.State(e.Device, "")
		c["payload_on"], c["payload_off"] = On, Off
	case Sensor:
		c["state_topic"] = t.State(e.Device, e.Quantity)
		if e.Unit != "" {
			c["unit_of_measurement"] = e.Unit
		}
		if dc := DeviceClass(e.Quantity, e.Unit); dc != "" {
			c["device_class"] = dc
		}
		c["state_class"] = "measurement"
	}
	return c
}
