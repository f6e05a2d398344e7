package hal

import (
	"context"
	"fmt"
	"math"
	"net"
	"time"

	"github.com/simonvetter/modbus"
)

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

func newModbusConn(e *openEnv) (*modbusConn, error) {
	if _, _, err := net.SplitHostPort(e.cfg.Address); err != nil {
		return nil, e.errorf("address", "%q is not host:port of a Modbus TCP server", e.cfg.Address)
	}
	if e.cfg.Unit < 0 || e.cfg.Unit > 255 {
		return nil, e.errorf("unit", "unit id %d out of range 0 … 255", e.cfg.Unit)
	}
	if e.cfg.Register < 0 || e.cfg.Register > math.MaxUint16 {
		return nil, e.errorf("register", "register %d out of range 0 … 65535", e.cfg.Register)
	}
	unit := uint8(e.cfg.Unit)
	if unit == 0 {
		unit = 1
	}
	t := e.cfg.Timeout.Duration
	if t == 0 {
		t = DefaultModbusTimeout
	}
	return &modbusConn{url: "tcp://" + e.cfg.Address, unit: unit, timeout: t}, nil
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
func openModbusCoil(e *openEnv) (driver, reading, error) {
	mc, err := newModbusConn(e)
	if err != nil {
		return nil, reading{}, err
	}
	return &switchDriver{out: &modbusCoil{mc, uint16(e.cfg.Register)}, onStop: e.cfg.OnStop, observe: e.observe}, reading{state: StateUnknown}, nil
}

// modbusRegister reads and writes one holding register; value = raw × scale.
type modbusRegister struct {
	*modbusConn
	reg   uint16
	scale float64
	unit  string
}

func (r *modbusRegister) supports(kind string) bool { return kind == Read || kind == Set }

func (r *modbusRegister) do(_ context.Context, a Action) (reading, error) {
	switch a.Kind {
	case Read:
		var raw uint16
		err := r.call(func(cl *modbus.ModbusClient) (err error) {
			raw, err = cl.ReadRegister(r.reg, modbus.HOLDING_REGISTER)
			return
		})
		if err != nil {
			return reading{}, err
		}
		return r.reading(raw), nil
	case Set:
		raw := math.Round(a.Value / r.scale)
		if raw < 0 || raw > math.MaxUint16 {
			return reading{}, fmt.Errorf("%w: %v is %v raw, out of a register's 0 … 65535", ErrBadValue, a.Value, raw)
		}
		if err := r.call(func(cl *modbus.ModbusClient) error { return cl.WriteRegister(r.reg, uint16(raw)) }); err != nil {
			return reading{}, err
		}
		return r.reading(uint16(raw)), nil
	}
	return reading{}, unsupported(a)
}

func (r *modbusRegister) reading(raw uint16) reading {
	return reading{state: StateOK, value: round(float64(raw) * r.scale), unit: r.unit}
}

func (r *modbusRegister) close() error { return r.release() }

func openModbusRegister(e *openEnv) (driver, reading, error) {
	mc, err := newModbusConn(e)
	if err != nil {
		return nil, reading{}, err
	}
	scale := e.cfg.Scale
	if scale == 0 {
		scale = 1
	}
	return &modbusRegister{modbusConn: mc, reg: uint16(e.cfg.Register), scale: scale, unit: e.cfg.Units}, reading{state: StateUnknown}, nil
}
