package hal

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// W1Bus is the bus name of the kernel's 1-wire master (dtoverlay=w1-gpio),
// read through Root/sys/bus/w1/devices.
const W1Bus = "w1"

// w1Name is the kernel's name of a 1-wire device: family code, "-", the
// 48-bit serial in hex ("28-0000070e41ac" for 0x..0000070e41ac28).
func w1Name(addr uint64) string {
	return fmt.Sprintf("%02x-%012x", addr&0xff, (addr>>8)&0xffffffffffff)
}

// parseW1Address reads a 1-wire address as periph writes it (64-bit
// "0x740000070e41ac28") or as the kernel names it ("28-0000070e41ac"); the
// kernel form has no CRC byte, so it only works over W1Bus.
func parseW1Address(s string) (addr uint64, kernelForm bool, err error) {
	if fam, serial, ok := strings.Cut(s, "-"); ok {
		f, err1 := strconv.ParseUint(fam, 16, 8)
		n, err2 := strconv.ParseUint(serial, 16, 48)
		if err1 != nil || err2 != nil || len(serial) != 12 {
			return 0, true, fmt.Errorf("%q is not a 1-wire device name", s)
		}
		return f | n<<8, true, nil
	}
	a, err := parseAddress(s, 0)
	if err != nil || a == 0 {
		return 0, false, fmt.Errorf("%q is not a 1-wire address", s)
	}
	return a, false, nil
}

// w1Therm reads a DS18B20 the kernel's w1_therm driver exposes: w1_slave
// (two lines, "crc=.. YES" and "t=23125") or, without it, temperature in
// millidegrees. A read starts a conversion and takes up to 750 ms.
type w1Therm struct {
	dir string
}

// w1Sensor finds the device name under Root/sys/bus/w1/devices; ok is false
// when bus is not W1Bus and the kernel does not list the device, so the
// caller uses periph's 1-wire buses.
func (b *HostBoard) w1Sensor(bus string, addr uint64) (s *w1Therm, ok bool, err error) {
	devs := b.path()(w1Devices)
	dir := filepath.Join(devs, w1Name(addr))
	if _, err := os.Stat(dir); err == nil {
		return &w1Therm{dir: dir}, true, nil
	}
	if bus != W1Bus {
		return nil, false, nil
	}
	entries, err := os.ReadDir(devs)
	if err != nil {
		return nil, true, fmt.Errorf("no %s: %s", devs, hintW1)
	}
	var found []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "w1_bus_master") {
			found = append(found, e.Name())
		}
	}
	slices.Sort(found)
	return nil, true, fmt.Errorf("no 1-wire device %s under %s (found: %s)", w1Name(addr), devs, orNone(found))
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none; check the wiring and the 4.7 kΩ pull-up"
	}
	return strings.Join(list, ", ")
}

func (s *w1Therm) Do(_ context.Context, a Action) (Reading, error) {
	if a.Kind != Read {
		return Reading{}, unsupported(a)
	}
	mc, err := s.read()
	if err != nil {
		return Reading{}, err
	}
	t := round(float64(mc) / 1000)
	return Reading{State: StateOK, Value: t, Unit: "°C", Values: map[string]Quantity{"temperature": {t, "°C"}}}, nil
}

// read returns the temperature in m°C.
func (s *w1Therm) read() (int64, error) {
	path := filepath.Join(s.dir, "w1_slave")
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		path = filepath.Join(s.dir, "temperature")
		if b, err = os.ReadFile(path); err == nil {
			v, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("hal: %s: %q is not a temperature", path, strings.TrimSpace(string(b)))
			}
			return v, nil
		}
	}
	if err != nil {
		return 0, fmt.Errorf("hal: read %s: %w", path, err)
	}
	return parseW1Slave(path, string(b))
}

// parseW1Slave reads w1_slave's two lines; a failed CRC is an error.
func parseW1Slave(path, text string) (int64, error) {
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "crc=") {
		return 0, fmt.Errorf("hal: %s: unexpected content %q", path, text)
	}
	if !strings.HasSuffix(strings.TrimSpace(lines[0]), "YES") {
		return 0, fmt.Errorf("hal: %s: CRC check failed (a loose wire or a long cable)", path)
	}
	_, t, ok := strings.Cut(lines[1], "t=")
	v, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if !ok || err != nil {
		return 0, fmt.Errorf("hal: %s: no temperature in %q", path, lines[1])
	}
	return v, nil
}

func (s *w1Therm) Close() error { return nil }
