package hal

import "slices"

// Field is one key of a [[device]] table as a form shows it: the key, what
// it means, and whether the driver needs it.
type Field struct {
	Key      string   `json:"key"`
	Help     string   `json:"help"`
	Kind     string   `json:"kind"` // string | bool | int | number | duration | list
	Required bool     `json:"required,omitempty"`
	Choices  []string `json:"choices,omitempty"`
}

// DriverInfo is a registered driver as the Settings page offers it
// (GET /api/config/drivers): its keys with their help, and what it does.
type DriverInfo struct {
	Name    string   `json:"name"`
	Actions []string `json:"actions"`
	Output  bool     `json:"output,omitempty"`
	Polled  bool     `json:"polled,omitempty"`
	Fields  []Field  `json:"fields"`
}

// fields is the help of every driver key (hal/README.md's table, DeviceSpec's comments).
var fields = map[string]Field{
	"node":       {Key: "node", Kind: "string", Help: "the board it is wired to; \"any\" for a shared bus or a network device (each board drives its own copy); name it: left empty, every board that reads the cluster's configuration takes the device as its own (in a board's own boot file: that board)"},
	"pin":        {Key: "pin", Kind: "string", Help: "the GPIO pin (\"GPIO17\"); pwm: PWM0, pwmchipN/pwmM or a GPIO"},
	"active_low": {Key: "active_low", Kind: "bool", Help: "invert the line: on = low"},
	"initial":    {Key: "initial", Kind: "string", Choices: []string{"", "on", "off"}, Help: "written when the device opens (default off)"},
	"on_stop":    {Key: "on_stop", Kind: "string", Choices: []string{"", "on", "off", "keep"}, Help: "written when the device closes: the board stops, or the device leaves the config (default keep)"},
	"interlock":  {Key: "interlock", Kind: "list", Help: "outputs of the same board never on together with this one"},
	"restore":    {Key: "restore", Kind: "string", Choices: []string{"", "last", "initial"}, Help: "after a restart: the state the cluster remembers (last), or initial"},
	"pull":       {Key: "pull", Kind: "string", Choices: []string{"", "up", "down", "none"}, Help: "the input's pull resistor (default none)"},
	"debounce":   {Key: "debounce", Kind: "duration", Help: "edges within this time of one are swallowed (\"20ms\" suits a button)"},
	"edge":       {Key: "edge", Kind: "string", Choices: []string{"", "rising", "falling", "both"}, Help: "the edges that count (default both)"},
	"frequency":  {Key: "frequency", Kind: "string", Help: "the PWM frequency (\"1kHz\")"},
	"bus":        {Key: "bus", Kind: "string", Help: "the bus: I²C \"1\" (/dev/i2c-1); 1-wire \"w1\""},
	"address":    {Key: "address", Kind: "string", Help: "I²C address (0x76), 1-wire id (28-…) or Modbus host:port"},
	"unit":       {Key: "unit", Kind: "int", Help: "Modbus unit id 0–255 (default 1)"},
	"register":   {Key: "register", Kind: "int", Help: "Modbus coil or holding register 0–65535"},
	"command":    {Key: "command", Kind: "list", Help: "the program and its arguments; it gets EWS_DEVICE, EWS_ACTION, EWS_VALUE"},
	"timeout":    {Key: "timeout", Kind: "duration", Help: "bounds one operation (\"2s\")"},
	"min":        {Key: "min", Kind: "number", Help: "the lowest value set accepts (sim-sensor: of its value)"},
	"max":        {Key: "max", Kind: "number", Help: "the highest value set accepts (sim-sensor: of its value)"},
	"scale":      {Key: "scale", Kind: "number", Help: "value = raw × scale (default 1)"},
	"units":      {Key: "units", Kind: "string", Help: "the unit shown with the value (\"°C\")"},
	"drift":      {Key: "drift", Kind: "number", Help: "random-walk step per read (default 0.1)"},
	"baseline":   {Key: "baseline", Kind: "number", Help: "the value it drifts around (default 21.5)"},
	"poll":       {Key: "poll", Kind: "duration", Help: "read this often without a client asking (default 5s)"},
	"max_age":    {Key: "max_age", Kind: "duration", Help: "a read may be answered from a reading this old (\"0s\": always read)"},
}

// driverKeys are each driver's own keys, in the order a form shows them.
var driverKeys = map[string][]string{
	"gpio-out":        {"pin", "active_low", "initial", "on_stop", "interlock", "restore"},
	"sim-switch":      {"initial", "on_stop", "interlock", "restore"},
	"gpio-in":         {"pin", "pull", "debounce", "edge", "active_low"},
	"sim-button":      {"debounce", "edge"},
	"pwm":             {"pin", "frequency", "initial", "on_stop", "interlock", "restore", "min", "max"},
	"sim-pwm":         {"frequency", "initial", "on_stop", "interlock", "restore", "min", "max"},
	"bmxx80":          {"bus", "address", "poll", "max_age"},
	"ds18b20":         {"bus", "address", "units", "poll", "max_age"},
	"sim-sensor":      {"baseline", "drift", "min", "max", "units", "poll", "max_age"},
	"modbus-coil":     {"address", "unit", "register", "timeout", "initial", "on_stop", "interlock", "restore"},
	"modbus-register": {"address", "unit", "register", "scale", "units", "timeout", "min", "max", "poll", "max_age"},
	"command":         {"command", "timeout", "units"},
}

// Drivers describes every registered driver, by name.
func Drivers() []DriverInfo {
	var out []DriverInfo
	for _, name := range DriverNames() {
		d := lookup(name)
		info := DriverInfo{Name: name, Output: d.Output, Polled: d.Polled, Fields: []Field{fields["node"]}}
		for _, k := range d.Actions {
			info.Actions = append(info.Actions, k.String())
		}
		keys := driverKeys[name]
		if keys == nil { // a driver this table does not know yet: what its needs say
			switch d.Needs {
			case NeedsPin:
				keys = []string{"pin"}
			case NeedsBus:
				keys = []string{"bus", "address"}
			}
		}
		for _, k := range keys {
			f := fields[k]
			f.Required = (k == "pin" && d.Needs == NeedsPin) || (slices.Contains([]string{"bus", "address"}, k) && d.Needs == NeedsBus) ||
				(k == "address" && (name == "modbus-coil" || name == "modbus-register")) || (k == "command" && name == "command")
			info.Fields = append(info.Fields, f)
		}
		out = append(out, info)
	}
	return out
}
