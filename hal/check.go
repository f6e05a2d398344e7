package hal

import (
	"fmt"
	"net"
	"os/exec"

	"periph.io/x/conn/v3/physic"

	"github.com/ews-firmware/ews/internal/config"
)

// Check finds, without hardware, what New would refuse about the devices
// of cfg: missing pins, buses and addresses, bad pull/edge/frequency values,
// Modbus addresses, programs that are not there, impossible interlocks. It
// checks every board's devices, so `ews config check` can run anywhere.
// Whether a pin or bus exists on the board is only known to New.
func Check(cfg *config.Config) config.Errors {
	var errs config.Errors
	bad := func(i int, field, format string, args ...any) {
		d := cfg.Devices[i]
		errs = append(errs, cfg.Errorf(fmt.Sprintf("device[%d].%s", i, field), "device %q: "+format, append([]any{d.Name}, args...)...))
	}
	byName := map[string]config.Device{}
	for _, d := range cfg.Devices {
		byName[d.Name] = d
	}
	for i, d := range cfg.Devices {
		switch d.Driver {
		case "gpio-out", "gpio-in", "pwm":
			if d.Pin == "" {
				bad(i, "pin", "driver %s needs a pin", d.Driver)
			}
		case "bmxx80", "ds18b20":
			if d.Bus == "" {
				bad(i, "bus", "driver %s needs a bus", d.Driver)
			}
		}
		switch d.Driver {
		case "gpio-in", "sim-button":
			if _, err := parsePull(d.Pull); err != nil {
				bad(i, "pull", "%v", err)
			}
			if _, err := parseEdge(d.Edge); err != nil {
				bad(i, "edge", "%v", err)
			}
		case "pwm", "sim-pwm":
			if d.Frequency != "" {
				var f physic.Frequency
				if err := f.Set(d.Frequency); err != nil || f <= 0 {
					bad(i, "frequency", "%q is not a frequency (e.g. \"1kHz\")", d.Frequency)
				}
			}
		case "bmxx80":
			if a, err := parseAddress(d.Address, 0x76); err != nil || a > 0x7f {
				bad(i, "address", "%q is not an I2C address", d.Address)
			}
		case "ds18b20":
			if a, err := parseAddress(d.Address, 0); err != nil || a == 0 {
				bad(i, "address", "%q is not a 1-wire address", d.Address)
			}
		case "modbus-coil", "modbus-register":
			if _, _, err := net.SplitHostPort(d.Address); err != nil {
				bad(i, "address", "%q is not host:port of a Modbus TCP server", d.Address)
			}
			if d.Unit < 0 || d.Unit > 255 {
				bad(i, "unit", "unit id %d out of range 0 … 255", d.Unit)
			}
			if d.Register < 0 || d.Register > 65535 {
				bad(i, "register", "register %d out of range 0 … 65535", d.Register)
			}
		case "command":
			if len(d.Command) == 0 || d.Command[0] == "" {
				bad(i, "command", "no program to run")
			} else if d.Node == cfg.Node.Name || d.Node == "any" {
				if _, err := exec.LookPath(d.Command[0]); err != nil {
					bad(i, "command", "%v", err)
				}
			}
		}
		for _, other := range d.Interlock {
			p, ok := byName[other]
			switch {
			case !ok: // config.Validate reports it
			case other == d.Name:
				bad(i, "interlock", "cannot interlock with itself")
			case !isOutput(d.Driver) || !isOutput(p.Driver):
				bad(i, "interlock", "interlock needs two outputs, %q is %s", other, p.Driver)
			case p.Node != d.Node:
				bad(i, "interlock", "partner %q is on board %q, this one on %q; both must be on one board", other, p.Node, d.Node)
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errs
}
