package history

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// The history file is a header then a run of self-contained blocks, one per
// flush, each framed as
//
//	marker [4]byte | length uint32 LE | crc32c(payload) uint32 LE | payload
//
// and a payload is a base time (ms, varint) then records, each a tag byte:
//
//	tagSeries: id uvarint, name, unit (uvarint length + bytes)
//	tagRaw:    id uvarint, n uvarint, then n × (dt varint ms, value float64 LE)
//	tagAgg:    id uvarint, n uvarint, then n × (dt varint ms, count uvarint, min mean max float32 LE)
//
// where dt is the step from the run's previous point (the first: from the
// base), so a reading every 5 s takes 10 bytes and a 1-minute bucket 16.
//
// A block names the series it uses, so any block can be read without the
// others: a torn or corrupted block is dropped and the reader resumes at the
// next marker. ONLY APPEND new tags; a reader skips a block with an unknown one.
const (
	fileHeader = "EWSHIST1"
	frameLen   = 12
	maxPayload = 64 << 20
)

var marker = [4]byte{0xE5, 'h', 'b', 'k'}

const (
	tagSeries byte = 1
	tagRaw    byte = 2
	tagAgg    byte = 3
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// rawPt is a point at full resolution: ms since the epoch and the value.
type rawPt struct {
	T int64
	V float64
}

// aggPt is a downsampled bucket starting at T (ms): N points, their
// min, mean and max (float32: a summary, and half the memory and card of
// a month of buckets).
type aggPt struct {
	T              int64
	N              uint32
	Min, Mean, Max float32
}

// acc is a bucket being filled (the open one, or one a query merges).
type acc struct {
	T              int64
	N              uint32
	Min, Mean, Max float64
}

func (a acc) pt() aggPt {
	return aggPt{T: a.T, N: a.N, Min: float32(a.Min), Mean: float32(a.Mean), Max: float32(a.Max)}
}

func (p aggPt) acc() acc {
	return acc{T: p.T, N: p.N, Min: float64(p.Min), Mean: float64(p.Mean), Max: float64(p.Max)}
}

// blockSeries is one series' points within a block.
type blockSeries struct {
	Name, Unit string
	Raw        []rawPt
	Agg        []aggPt
}

// appendBlock appends one framed block holding series to dst.
func appendBlock(dst []byte, series []blockSeries) []byte {
	start := len(dst)
	dst = append(dst, marker[:]...)
	dst = append(dst, make([]byte, 8)...)
	var base int64
	found := false
	for _, s := range series {
		for _, p := range s.Raw {
			if !found || p.T < base {
				base, found = p.T, true
			}
		}
		for _, p := range s.Agg {
			if !found || p.T < base {
				base, found = p.T, true
			}
		}
	}
	p := len(dst)
	dst = binary.AppendVarint(dst, base)
	for id, s := range series {
		dst = append(dst, tagSeries)
		dst = binary.AppendUvarint(dst, uint64(id))
		dst = appendString(dst, s.Name)
		dst = appendString(dst, s.Unit)
		if len(s.Raw) > 0 {
			dst = append(dst, tagRaw)
			dst = binary.AppendUvarint(dst, uint64(id))
			dst = binary.AppendUvarint(dst, uint64(len(s.Raw)))
			prev := base
			for _, r := range s.Raw {
				dst = binary.AppendVarint(dst, r.T-prev)
				dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(r.V))
				prev = r.T
			}
		}
		if len(s.Agg) > 0 {
			dst = append(dst, tagAgg)
			dst = binary.AppendUvarint(dst, uint64(id))
			dst = binary.AppendUvarint(dst, uint64(len(s.Agg)))
			prev := base
			for _, a := range s.Agg {
				dst = binary.AppendVarint(dst, a.T-prev)
				dst = binary.AppendUvarint(dst, uint64(a.N))
				dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(a.Min))
				dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(a.Mean))
				dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(a.Max))
				prev = a.T
			}
		}
	}
	payload := dst[p:]
	binary.LittleEndian.PutUint32(dst[start+4:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(dst[start+8:], crc32.Checksum(payload, castagnoli))
	return dst
}

func appendString(dst []byte, s string) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(s)))
	return append(dst, s...)
}

var errShort = errors.New("short record")

// decodeBlock reads one payload back into its series.
func decodeBlock(b []byte) ([]blockSeries, error) {
	base, n := binary.Varint(b)
	if n <= 0 {
		return nil, errShort
	}
	b = b[n:]
	var out []blockSeries
	for len(b) > 0 {
		tag := b[0]
		b = b[1:]
		id, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errShort
		}
		b = b[n:]
		if tag == tagSeries {
			if id != uint64(len(out)) {
				return nil, fmt.Errorf("series id %d out of order", id)
			}
			var s blockSeries
			var err error
			if s.Name, b, err = readString(b); err != nil {
				return nil, err
			}
			if s.Unit, b, err = readString(b); err != nil {
				return nil, err
			}
			out = append(out, s)
			continue
		}
		if id >= uint64(len(out)) {
			return nil, fmt.Errorf("unknown series id %d", id)
		}
		if tag != tagRaw && tag != tagAgg {
			return nil, fmt.Errorf("unknown record tag %d", tag)
		}
		count, n := binary.Uvarint(b)
		if n <= 0 || count > uint64(len(b)) {
			return nil, errShort
		}
		b = b[n:]
		s := &out[id]
		prev := base
		for range count {
			dt, n := binary.Varint(b)
			if n <= 0 {
				return nil, errShort
			}
			b = b[n:]
			prev += dt
			if tag == tagRaw {
				if len(b) < 8 {
					return nil, errShort
				}
				s.Raw = append(s.Raw, rawPt{T: prev, V: math.Float64frombits(binary.LittleEndian.Uint64(b))})
				b = b[8:]
				continue
			}
			cnt, n := binary.Uvarint(b)
			if n <= 0 || len(b) < n+12 {
				return nil, errShort
			}
			b = b[n:]
			s.Agg = append(s.Agg, aggPt{T: prev, N: uint32(cnt), Min: f32(b), Mean: f32(b[4:]), Max: f32(b[8:])})
			b = b[12:]
		}
	}
	return out, nil
}

func f32(b []byte) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }

func readString(b []byte) (string, []byte, error) {
	l, n := binary.Uvarint(b)
	if n <= 0 || uint64(len(b)-n) < l {
		return "", nil, errShort
	}
	return string(b[n : n+int(l)]), b[n+int(l):], nil
}

// scan walks the blocks of a whole file, calling fn with each good one.
// It returns the offset just past the last good block and how many bytes
// it skipped as torn or corrupt (a bad header counts as skipped too).
func scan(data []byte, fn func([]blockSeries)) (good int64, dropped int64, reasons []string) {
	off := 0
	if bytes.HasPrefix(data, []byte(fileHeader)) {
		off = len(fileHeader)
	} else if len(data) > 0 {
		reasons = append(reasons, "bad file header")
	}
	good = int64(off)
	for off < len(data) {
		if !bytes.HasPrefix(data[off:], marker[:]) {
			next := bytes.Index(data[off:], marker[:])
			if next < 0 {
				dropped += int64(len(data) - off)
				reasons = append(reasons, fmt.Sprintf("%d bytes of garbage at offset %d", len(data)-off, off))
				break
			}
			dropped += int64(next)
			reasons = append(reasons, fmt.Sprintf("%d bytes of garbage at offset %d", next, off))
			off += next
			continue
		}
		if len(data)-off < frameLen {
			dropped += int64(len(data) - off)
			reasons = append(reasons, fmt.Sprintf("torn frame at offset %d", off))
			break
		}
		l := int(binary.LittleEndian.Uint32(data[off+4:]))
		sum := binary.LittleEndian.Uint32(data[off+8:])
		end := off + frameLen + l
		if l > maxPayload || end > len(data) || crc32.Checksum(data[off+frameLen:end], castagnoli) != sum {
			// skip past this marker and look for the next
			reasons = append(reasons, fmt.Sprintf("bad block at offset %d", off))
			skip := 1 + max(0, bytes.Index(data[off+1:], marker[:]))
			if bytes.Index(data[off+1:], marker[:]) < 0 {
				skip = len(data) - off
			}
			dropped += int64(skip)
			off += skip
			continue
		}
		series, err := decodeBlock(data[off+frameLen : end])
		if err != nil {
			reasons = append(reasons, fmt.Sprintf("block at offset %d: %v", off, err))
			dropped += int64(end - off)
			off = end
			continue
		}
		fn(series)
		off = end
		good = int64(off)
	}
	return good, dropped, reasons
}
