package hal

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/simonvetter/modbus"
)

// plc is a Modbus TCP server on loopback with coils and holding registers.
type plc struct {
	mu     sync.Mutex
	coils  [16]bool
	regs   [16]uint16
	writes int
	srv    *modbus.ModbusServer
	addr   string
}

func (p *plc) HandleCoils(req *modbus.CoilsRequest) ([]bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if int(req.Addr)+int(req.Quantity) > len(p.coils) {
		return nil, modbus.ErrIllegalDataAddress
	}
	if req.IsWrite {
		p.writes++
		copy(p.coils[req.Addr:], req.Args)
		return nil, nil
	}
	return append([]bool(nil), p.coils[req.Addr:req.Addr+req.Quantity]...), nil
}

func (p *plc) HandleDiscreteInputs(*modbus.DiscreteInputsRequest) ([]bool, error) {
	return nil, modbus.ErrIllegalFunction
}

func (p *plc) HandleHoldingRegisters(req *modbus.HoldingRegistersRequest) ([]uint16, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if int(req.Addr)+int(req.Quantity) > len(p.regs) {
		return nil, modbus.ErrIllegalDataAddress
	}
	if req.IsWrite {
		p.writes++
		copy(p.regs[req.Addr:], req.Args)
		return nil, nil
	}
	return append([]uint16(nil), p.regs[req.Addr:req.Addr+req.Quantity]...), nil
}

func (p *plc) HandleInputRegisters(*modbus.InputRegistersRequest) ([]uint16, error) {
	return nil, modbus.ErrIllegalFunction
}

// startPLC starts the server on a free loopback port (the library cannot
// report the port it bound, so the test reserves one first).
func startPLC(t *testing.T, addr string) *plc {
	t.Helper()
	if addr == "" {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr = l.Addr().String()
		_ = l.Close()
	}
	p := &plc{addr: addr}
	srv, err := modbus.NewServer(&modbus.ServerConfiguration{URL: "tcp://" + addr, Timeout: 5 * time.Second, MaxClients: 4}, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	p.srv = srv
	t.Cleanup(func() { _ = srv.Stop() })
	return p
}

func TestModbus(t *testing.T) {
	p := startPLC(t, "")
	p.regs[3] = 215
	ds := open(t, parse(t, "[[device]]\nname = \"pump\"\ndriver = \"modbus-coil\"\nnode = \"any\"\naddress = \""+p.addr+"\"\nregister = 2\ntimeout = \"500ms\"\n\n"+
		"[[device]]\nname = \"setpoint\"\ndriver = \"modbus-register\"\nnode = \"any\"\naddress = \""+p.addr+"\"\nregister = 3\nscale = 0.1\nunits = \"°C\"\ntimeout = \"500ms\"\n\n"+
		"[[device]]\nname = \"local\"\ndriver = \"sim-switch\"\n"), nil)

	if s := do(t, ds, "pump", Action{Kind: TurnOn}); s.State != StateOn {
		t.Fatalf("turn_on: %+v", s)
	}
	p.mu.Lock()
	on := p.coils[2]
	p.mu.Unlock()
	if !on {
		t.Fatal("coil 2 not set on the server")
	}
	if s := do(t, ds, "setpoint", Action{Kind: Read}); s.Value != 21.5 || s.Unit != "°C" {
		t.Fatalf("read register: %+v, want 21.5 °C", s)
	}
	do(t, ds, "setpoint", Action{Kind: Set, Value: 22.3})
	p.mu.Lock()
	raw := p.regs[3]
	p.mu.Unlock()
	if raw != 223 {
		t.Fatalf("register = %d, want 223", raw)
	}
	if _, err := ds.Do(t.Context(), "setpoint", Action{Kind: Set, Value: -1}); !errors.Is(err, ErrBadValue) {
		t.Fatalf("set -1: %v, want ErrBadValue", err)
	}

	// the server goes away: a driver error, the device in error, others fine
	_ = p.srv.Stop()
	_, err := ds.Do(t.Context(), "pump", Action{Kind: Read})
	var de *DriverError
	if !errors.As(err, &de) {
		t.Fatalf("read with server down: %v, want DriverError", err)
	}
	if s, _ := ds.Get("pump"); s.State != StateError {
		t.Fatalf("pump state %q, want error", s.State)
	}
	do(t, ds, "local", Action{Kind: TurnOn})

	// it comes back on the same port: the device recovers
	p2 := startPLC(t, p.addr)
	p2.coils[2] = true
	if s := do(t, ds, "pump", Action{Kind: Read}); s.State != StateOn || s.Error != "" {
		t.Fatalf("after recovery: %+v", s)
	}
}
