package mqtt

import "strings"

// Payloads on the wire.
const (
	Online  = "online"
	Offline = "offline"
	On      = "ON"
	Off     = "OFF"
	Toggle  = "TOGGLE"
)

// Topics names every topic of a cluster under its prefix:
//
//	<prefix>/status                       online | offline (the master's will)
//	<prefix>/board/<board>/status         online | offline (from the table)
//	<prefix>/<device>/state               ON | OFF | a number
//	<prefix>/<device>/<quantity>/state    a number (multi-quantity sensors)
//	<prefix>/<device>/brightness          0 … 100 (lights)
//	<prefix>/<device>/set                 ON | OFF | TOGGLE (commands)
//	<prefix>/<device>/brightness/set      0 … 100 (commands)
type Topics struct {
	Prefix    string
	Discovery string // Home Assistant's discovery prefix
}

// Status is the cluster's availability topic.
func (t Topics) Status() string { return t.Prefix + "/status" }

// BoardStatus is a board's availability topic.
func (t Topics) BoardStatus(board string) string { return t.Prefix + "/board/" + ID(board) + "/status" }

// State is a device's (or one quantity's) state topic.
func (t Topics) State(device, quantity string) string {
	if quantity != "" {
		return t.Prefix + "/" + ID(device) + "/" + ID(quantity) + "/state"
	}
	return t.Prefix + "/" + ID(device) + "/state"
}

// Brightness is a light's level topic.
func (t Topics) Brightness(device string) string { return t.Prefix + "/" + ID(device) + "/brightness" }

// Command is a device's command topic.
func (t Topics) Command(device string) string { return t.Prefix + "/" + ID(device) + "/set" }

// BrightnessCommand is a light's level command topic.
func (t Topics) BrightnessCommand(device string) string {
	return t.Prefix + "/" + ID(device) + "/brightness/set"
}

// Subscriptions are the command topic filters.
func (t Topics) Subscriptions() []string {
	return []string{t.Prefix + "/+/set", t.Prefix + "/+/brightness/set"}
}

// ParseCommand returns the device id (ID of its name) and whether the topic
// is a brightness command; ok is false for a topic that is no command.
func (t Topics) ParseCommand(topic string) (device string, brightness, ok bool) {
	rest, found := strings.CutPrefix(topic, t.Prefix+"/")
	if !found {
		return "", false, false
	}
	parts := strings.Split(rest, "/")
	switch {
	case len(parts) == 2 && parts[1] == "set":
		return parts[0], false, parts[0] != ""
	case len(parts) == 3 && parts[1] == "brightness" && parts[2] == "set":
		return parts[0], true, parts[0] != ""
	}
	return "", false, false
}
