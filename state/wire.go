package state

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// The msgpack subset the messages use (unsigned ints, strings, bools, arrays, nil), written and
// read by hand: the bytes are those of vmihailenco/msgpack v5 with compact ints and as_array
// structs, the encoding the protocol was defined with (TestWireMatchesMsgpack holds the two
// equal), without linking a reflection codec into every board (~0.2 MB; docs/notes/lighter-boards.md).

const (
	mpNil     = 0xc0
	mpFalse   = 0xc2
	mpTrue    = 0xc3
	mpBin8    = 0xc4
	mpBin16   = 0xc5
	mpBin32   = 0xc6
	mpUint8   = 0xcc
	mpUint16  = 0xcd
	mpUint32  = 0xce
	mpUint64  = 0xcf
	mpInt8    = 0xd0
	mpInt16   = 0xd1
	mpInt32   = 0xd2
	mpInt64   = 0xd3
	mpStr8    = 0xd9
	mpStr16   = 0xda
	mpStr32   = 0xdb
	mpArray16 = 0xdc
	mpArray32 = 0xdd
	mpMap16   = 0xde
	mpMap32   = 0xdf
)

// enc appends msgpack values.
type enc struct{ b []byte }

// uint writes n in the fewest bytes (positive fixint, uint8, 16, 32, 64).
func (e *enc) uint(n uint64) {
	switch {
	case n <= math.MaxInt8:
		e.b = append(e.b, byte(n))
	case n <= math.MaxUint8:
		e.b = append(e.b, mpUint8, byte(n))
	case n <= math.MaxUint16:
		e.b = binary.BigEndian.AppendUint16(append(e.b, mpUint16), uint16(n))
	case n <= math.MaxUint32:
		e.b = binary.BigEndian.AppendUint32(append(e.b, mpUint32), uint32(n))
	default:
		e.b = binary.BigEndian.AppendUint64(append(e.b, mpUint64), n)
	}
}

func (e *enc) str(s string) {
	switch l := len(s); {
	case l < 32:
		e.b = append(e.b, 0xa0|byte(l))
	case l < 256:
		e.b = append(e.b, mpStr8, byte(l))
	case l <= math.MaxUint16:
		e.b = binary.BigEndian.AppendUint16(append(e.b, mpStr16), uint16(l))
	default:
		e.b = binary.BigEndian.AppendUint32(append(e.b, mpStr32), uint32(l))
	}
	e.b = append(e.b, s...)
}

// bin writes b as msgpack bin (nil for a nil slice), as msgpack writes a []byte.
func (e *enc) bin(b []byte) {
	switch l := len(b); {
	case b == nil:
		e.b = append(e.b, mpNil)
		return
	case l < 256:
		e.b = append(e.b, mpBin8, byte(l))
	case l <= math.MaxUint16:
		e.b = binary.BigEndian.AppendUint16(append(e.b, mpBin16), uint16(l))
	default:
		e.b = binary.BigEndian.AppendUint32(append(e.b, mpBin32), uint32(l))
	}
	e.b = append(e.b, b...)
}

func (e *enc) bool(v bool) {
	if v {
		e.b = append(e.b, mpTrue)
	} else {
		e.b = append(e.b, mpFalse)
	}
}

// arrayLen writes an array header; a nil slice is written as nil by the caller (list).
func (e *enc) arrayLen(l int) {
	switch {
	case l < 16:
		e.b = append(e.b, 0x90|byte(l))
	case l <= math.MaxUint16:
		e.b = binary.BigEndian.AppendUint16(append(e.b, mpArray16), uint16(l))
	default:
		e.b = binary.BigEndian.AppendUint32(append(e.b, mpArray32), uint32(l))
	}
}

// list writes nil for a nil slice, else the array header of n elements.
func (e *enc) list(isNil bool, n int) {
	if isNil {
		e.b = append(e.b, mpNil)
		return
	}
	e.arrayLen(n)
}

// dec reads msgpack values from b, as leniently as vmihailenco/msgpack does for the kinds it
// reads: any integer encoding for an unsigned field (truncated to the field's width, as
// msgpack's SetUint does), str or bin for a string, and nil for a zero value. It never panics
// and never allocates for a length the input cannot hold.
type dec struct {
	b   []byte
	off int
}

var errShort = errors.New("msgpack: unexpected end of input")

func (d *dec) code() (byte, error) {
	if d.off >= len(d.b) {
		return 0, errShort
	}
	c := d.b[d.off]
	d.off++
	return c, nil
}

func (d *dec) next(n int) ([]byte, error) {
	if n < 0 || n > len(d.b)-d.off {
		return nil, errShort
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p, nil
}

func (d *dec) be(n int) (uint64, error) {
	p, err := d.next(n)
	if err != nil {
		return 0, err
	}
	var v uint64
	for _, c := range p {
		v = v<<8 | uint64(c)
	}
	return v, nil
}

// uint reads an integer of any msgpack encoding; negative ones wrap, as msgpack's DecodeUint64.
func (d *dec) uint() (uint64, error) {
	c, err := d.code()
	if err != nil {
		return 0, err
	}
	switch {
	case c == mpNil:
		return 0, nil
	case c <= 0x7f || c >= 0xe0:
		return uint64(int64(int8(c))), nil
	}
	switch c {
	case mpUint8:
		return d.be(1)
	case mpUint16:
		return d.be(2)
	case mpUint32:
		return d.be(4)
	case mpUint64, mpInt64:
		return d.be(8)
	case mpInt8:
		v, err := d.be(1)
		return uint64(int64(int8(v))), err
	case mpInt16:
		v, err := d.be(2)
		return uint64(int64(int16(v))), err
	case mpInt32:
		v, err := d.be(4)
		return uint64(int64(int32(v))), err
	}
	return 0, fmt.Errorf("msgpack: invalid code=%x decoding uint64", c)
}

func (d *dec) str() (string, error) {
	c, err := d.code()
	if err != nil {
		return "", err
	}
	var n uint64
	switch {
	case c == mpNil:
		return "", nil
	case c >= 0xa0 && c <= 0xbf:
		n = uint64(c & 0x1f)
	case c == mpStr8 || c == mpBin8:
		n, err = d.be(1)
	case c == mpStr16 || c == mpBin16:
		n, err = d.be(2)
	case c == mpStr32 || c == mpBin32:
		n, err = d.be(4)
	default:
		return "", fmt.Errorf("msgpack: invalid code=%x decoding string/bytes length", c)
	}
	if err != nil {
		return "", err
	}
	p, err := d.next(int(min(n, math.MaxInt32)))
	return string(p), err
}

func (d *dec) bool() (bool, error) {
	c, err := d.code()
	if err != nil {
		return false, err
	}
	switch c {
	case mpNil, mpFalse:
		return false, nil
	case mpTrue:
		return true, nil
	}
	return false, fmt.Errorf("msgpack: invalid code=%x decoding bool", c)
}

// arrayLen reads an array header: -1 for nil.
func (d *dec) arrayLen() (int, error) {
	c, err := d.code()
	if err != nil {
		return 0, err
	}
	var n uint64
	switch {
	case c == mpNil:
		return -1, nil
	case c >= 0x90 && c <= 0x9f:
		return int(c & 0x0f), nil
	case c == mpArray16:
		n, err = d.be(2)
	case c == mpArray32:
		n, err = d.be(4)
	default:
		return 0, fmt.Errorf("msgpack: invalid code=%x decoding array length", c)
	}
	return int(min(n, math.MaxInt32)), err
}

// errArrayStruct is msgpack's refusal of an array whose length is not the struct's.
var errArrayStruct = errors.New("msgpack: number of fields in array-encoded struct has changed")

// structLen reads the header of a struct encoded as an array of fields: present is false for nil
// or an empty array (the zero struct, as msgpack decodes them); any other length but fields is an
// error. A struct encoded as a map (field names as keys), which no ews build sends, is refused.
func (d *dec) structLen(fields int) (present bool, err error) {
	if d.off < len(d.b) {
		if c := d.b[d.off]; (c >= 0x80 && c <= 0x8f) || c == mpMap16 || c == mpMap32 {
			return false, fmt.Errorf("msgpack: a struct encoded as a map (code=%x); ews sends arrays", c)
		}
	}
	n, err := d.arrayLen()
	if err != nil || n <= 0 {
		return false, err
	}
	if n != fields {
		return false, errArrayStruct
	}
	return true, nil
}
