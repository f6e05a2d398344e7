package hal

import (
	"context"
	"fmt"
	"math"
	"net"
	"time"

	"github.com/simonvetter/modbus"
)

func init() {
	Register(Driver{Name: "modbus-coil", Open: openModbusCoil, Check: checkModbus, Actions: switchActions, Output: true, Restores: true})
	Register(Driver{Name: "modbus-register", Open: openModbusRegister, Check: checkModbus, Actions: []Kind{Read, Set}, Polled: true})
}

func checkModbus(s DeviceSpec, _ bool, bad func(key, format string, args ...any)) {
	if _, _, err := net.SplitHostPort(s.Address); err != nil {
		bad("address", "%q is not host:port of a Modbus TCP server", s.Address)
	}
	if s.Unit < 0 || s.Unit > 255 {
		bad("unit", "unit id %d out of range 0 … 255", s.Unit)
	}
	if s.Register < 0 || s.Register > math.MaxUint16 {
		bad("register", "register %d out of range 0 … 65535", s.Register)
	}
}

// DefaultModbusTimeout bounds one Modbus request when the device gives none.
const DefaultModbusTimeout = time.Second

// modbusConn is a Modbus TCP client that connects on first use and again
// after a failure, so a PLC that was away recovers without a restart.
type modbusConn struct {
	url     string
	unit    uint8
	timeout time.Duration
	client  *modbus.ModbusClient
}

func (m *modbusConn) conn() (*modbus.ModbusClient, error) {
	if m.client != nil {
		return m.client, nil
	}
	c, err := modbus.NewClient(&modbus.ClientConfiguration{URL: m.url, Timeout: m.timeout})
	if err != nil {
		return nil, err
	}
	if err := c.Open(); err != nil {
		return nil, fmt.Errorf("modbus %s: %w", m.url, err)
	}
	if err := c.SetUnitId(m.unit); err != nil {
		_ = c.Close()
		return nil, err
	}
	m.client = c
	return c, nil
}

// call runs f on a connected client and drops the connection when it fails.
func (m *modbusConn) call(f func(*modbus.ModbusClient) error) error {
	c, err := m.conn()
	if err != nil {
		return err
	}
	if err := f(c); err != nil {
		m.release()
		return fmt.Errorf("modbus %s: %w", m.url, err)
	}
	return nil
}

func (m *modbusConn) release() error {
	if m.client == nil {
		return nil
	}
	err := m.client.Close()
	m.client = nil
	return err
}

// newModbusConn builds the connection of e; New has run checkModbus, so
// address, unit and register are in range.
func newModbusConn(e *Env) *modbusConn {
	unit := uint8(e.Spec.Unit)
	if unit == 0 {
		unit = 1
	}
	t := e.Spec.Timeout.Duration
	if t == 0 {
		t = DefaultModbusTimeout
	}
	return &modbusConn{url: "tcp://" + e.Spec.Address, unit: unit, timeout: t}
}

// modbusCoil is a coil as a binaryOut.
type modbusCoil struct {
	*modbusConn
	reg uint16
}

func (c *modbusCoil) set(_ context.Context, on bool) error {
	return c.call(func(cl *modbus.ModbusClient) error { return cl.WriteCoil(c.reg, on) })
}

func (c *modbusCoil) get(context.Context) (on bool, err error) {
	err = c.call(func(cl *modbus.ModbusClient) (err error) { on, err = cl.ReadCoil(c.reg); return })
	return on, err
}

// openModbusCoil connects lazily: a server that is down at start leaves the
// device in error until it answers, it does not stop the board.
func openModbusCoil(e *Env) (Instance, Reading, error) {
	mc := newModbusConn(e)
	return &switchDriver{out: &modbusCoil{mc, uint16(e.Spec.Register)}, onStop: e.Spec.OnStop, observe: e.Observe}, Reading{State: StateUnknown}, nil
}

// modbusRegister reads and writes one holding register; value = raw × scale.
type modbusRegister struct {
	*modbusConn
	reg   uint16
	scale float64
	unit  string
}

func (r *modbusRegister) Do(_ context.Context, a Action) (Reading, error) {
	switch a.Kind {
	case Read:
		var raw uint16
		err := r.call(func(cl *modbus.ModbusClient) (err error) {
			raw, err = cl.ReadRegister(r.reg, modbus.HOLDING_REGISTER)
			return
		})
		if err != nil {
			return Reading{}, err
		}
		return r.Reading(raw), nil
	case Set:
		raw := math.Round(a.Value / r.scale)
		if raw < 0 || raw > math.MaxUint16 {
			return Reading{}, fmt.Errorf("%w: %v is %v raw, out of a register's 0 … 65535", ErrBadValue, a.Value, raw)
		}
		if err := r.call(func(cl *modbus.ModbusClient) error { return cl.WriteRegister(r.reg, uint16(raw)) }); err != nil {
			return Reading{}, err
		}
		return r.Reading(uint16(raw)), nil
	}
	return Reading{}, unsupported(a)
}

func (r *modbusRegister) Reading(raw uint16) Reading {
	return Reading{State: StateOK, Value: round(float64(raw) * r.scale), Unit: r.unit}
}

func (r *modbusRegister) Close() error { return r.release() }

func openModbusRegister(e *Env) (Instance, Reading, error) {
	mc := newModbusConn(e)
	scale := e.Spec.Scale
	if scale == 0 {
		scale = 1
	}
	return &modbusRegister{modbusConn: mc, reg: uint16(e.Spec.Register), scale: scale, unit: e.Spec.Units}, Reading{State: StateUnknown}, nil
}
