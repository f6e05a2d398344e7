package state

import "fmt"

// Each message is a msgpack array of its fields in declaration order. Fields are only ever
// appended (see ProtocolVersion), so a message at an older version is its first fields: the
// counts below say how many each version has.
const (
	tableFieldsV1  = 5  // Epoch Master Version PeersHash Rows
	tableFields    = 6  // + Stats (version 2)
	reportFieldsV2 = 13 // Name … PeersHash
	reportFields   = 20 // + Creds DiskUsed NetPPS DiskOps CPUMHz MemMB Simulated (version 3)
	stepDownV1     = 2  // Name Epoch
	stepDownFields = 3  // + PeersHash (version 3)
	peerListFields = 2
	digestFields   = 5
	tableReqFields = 4
	rowFields      = 11
	classFields    = 3
	introFields    = 6 // Name Boot Pub Cert Sig Want (version 5)
	relayFields    = 5 // Origin Boot Seq Inner Sig
	deltaFields    = 7 // Epoch Master Version Hash PeersHash Rows Stats
)

// encodeBody writes m's array at protocol version v.
func encodeBody(e *enc, m Message, v uint8) {
	switch m := m.(type) {
	case *TableMsg:
		n := tableFields
		if v < 2 {
			n = tableFieldsV1
		}
		encodeTable(e, m, n)
	case *ReportMsg:
		n := reportFields
		if v < 3 {
			n = reportFieldsV2
		}
		encodeReport(e, m, n)
	case *StepDownMsg:
		n := stepDownFields
		if v < 3 {
			n = stepDownV1
		}
		e.arrayLen(n)
		e.str(m.Name)
		e.uint(m.Epoch)
		if n > stepDownV1 {
			e.uint(uint64(m.PeersHash))
		}
	case *PeerListMsg:
		e.arrayLen(peerListFields)
		e.str(m.Name)
		e.list(m.Peers == nil, len(m.Peers))
		for _, p := range m.Peers {
			e.str(p)
		}
	case *DigestMsg:
		e.arrayLen(digestFields)
		e.uint(m.Epoch)
		e.str(m.Master)
		e.uint(m.Version)
		e.uint(uint64(m.Hash))
		e.uint(uint64(m.PeersHash))
	case *TableReqMsg:
		e.arrayLen(tableReqFields)
		e.str(m.Name)
		e.uint(m.Epoch)
		e.uint(m.Version)
		e.uint(uint64(m.PeersHash))
	case *IntroMsg:
		e.arrayLen(introFields)
		e.str(m.Name)
		e.uint(m.Boot)
		e.bin(m.Pub)
		e.bin(m.Cert)
		e.bin(m.Sig)
		e.bool(m.Want)
	case *RelayMsg:
		e.arrayLen(relayFields)
		e.str(m.Origin)
		e.uint(m.Boot)
		e.uint(m.Seq)
		e.bin(m.Inner)
		e.bin(m.Sig)
	case *DeltaMsg:
		e.arrayLen(deltaFields)
		e.uint(m.Epoch)
		e.str(m.Master)
		e.uint(m.Version)
		e.uint(uint64(m.Hash))
		e.uint(uint64(m.PeersHash))
		e.list(m.Rows == nil, len(m.Rows))
		for i := range m.Rows {
			encodeRow(e, &m.Rows[i])
		}
		encodeStats(e, m.Stats)
	}
}

func encodeStats(e *enc, stats ClassStats) {
	e.list(stats == nil, len(stats))
	for _, c := range stats {
		e.arrayLen(classFields)
		e.str(c.Name)
		e.uint(uint64(c.Depth))
		e.uint(c.Dispatched)
	}
}

func encodeTable(e *enc, m *TableMsg, fields int) {
	e.arrayLen(fields)
	e.uint(m.Epoch)
	e.str(m.Master)
	e.uint(m.Version)
	e.uint(uint64(m.PeersHash))
	e.list(m.Rows == nil, len(m.Rows))
	for i := range m.Rows {
		encodeRow(e, &m.Rows[i])
	}
	if fields > tableFieldsV1 {
		encodeStats(e, m.Stats)
	}
}

func encodeRow(e *enc, r *Row) {
	e.arrayLen(rowFields)
	e.uint(uint64(r.Rank))
	e.str(r.Name)
	for _, n := range []uint32{r.Linknum, r.Capacity, r.Weight, uint32(r.Runstate), uint32(r.CPU), uint32(r.Mem), uint32(r.Net), uint32(r.Disk), r.AgeMs} {
		e.uint(uint64(n))
	}
}

func encodeReport(e *enc, m *ReportMsg, fields int) {
	e.arrayLen(fields)
	e.str(m.Name)
	e.uint(m.Epoch)
	e.str(m.HTTP)
	e.uint(uint64(m.InFlight))
	e.uint(m.Completed)
	for _, n := range []uint32{m.Capacity, m.Weight, uint32(m.Runstate), uint32(m.CPU), uint32(m.Mem), uint32(m.Net), uint32(m.Disk), m.PeersHash} {
		e.uint(uint64(n))
	}
	if fields > reportFieldsV2 {
		e.uint(m.Creds)
		for _, n := range []uint32{uint32(m.DiskUsed), m.NetPPS, m.DiskOps, m.CPUMHz, m.MemMB} {
			e.uint(uint64(n))
		}
		e.bool(m.Simulated)
	}
}

// decodeBody reads the array of a message of type t at version v into m, a new zero message.
// Every field is read with the first error kept: reads after an error return zeros and the
// error, so the code reads top to bottom like the struct.
func decodeBody(d *dec, m Message, v uint8) error {
	r := reader{d: d}
	switch m := m.(type) {
	case *TableMsg:
		n := tableFields
		if v < 2 {
			n = tableFieldsV1
		}
		if !r.open(n) {
			break
		}
		m.Epoch, m.Master, m.Version, m.PeersHash = r.u64(), r.str(), r.u64(), r.u32()
		m.Rows = decodeRows(&r)
		if n > tableFieldsV1 {
			m.Stats = decodeStats(&r)
		}
	case *ReportMsg:
		n := reportFields
		if v < 3 {
			n = reportFieldsV2
		}
		if !r.open(n) {
			break
		}
		m.Name, m.Epoch, m.HTTP, m.InFlight, m.Completed = r.str(), r.u64(), r.str(), r.u32(), r.u64()
		m.Capacity, m.Weight, m.Runstate = r.u32(), r.u32(), Runstate(r.u8())
		m.CPU, m.Mem, m.Net, m.Disk, m.PeersHash = r.u16(), r.u16(), r.u16(), r.u16(), r.u32()
		if n > reportFieldsV2 {
			m.Creds, m.DiskUsed, m.NetPPS, m.DiskOps, m.CPUMHz, m.MemMB = r.u64(), r.u16(), r.u32(), r.u32(), r.u32(), r.u32()
			m.Simulated = r.bool()
		}
	case *StepDownMsg:
		n := stepDownFields
		if v < 3 {
			n = stepDownV1
		}
		if !r.open(n) {
			break
		}
		m.Name, m.Epoch = r.str(), r.u64()
		if n > stepDownV1 {
			m.PeersHash = r.u32()
		}
	case *PeerListMsg:
		if !r.open(peerListFields) {
			break
		}
		m.Name = r.str()
		if n := r.bounded(MaxBoards, "string"); n >= 0 {
			m.Peers = make(Strings, n)
			for i := range m.Peers {
				m.Peers[i] = r.str()
			}
		}
	case *DigestMsg:
		if !r.open(digestFields) {
			break
		}
		m.Epoch, m.Master, m.Version, m.Hash, m.PeersHash = r.u64(), r.str(), r.u64(), r.u32(), r.u32()
	case *TableReqMsg:
		if !r.open(tableReqFields) {
			break
		}
		m.Name, m.Epoch, m.Version, m.PeersHash = r.str(), r.u64(), r.u64(), r.u32()
	case *IntroMsg:
		if !r.open(introFields) {
			break
		}
		m.Name, m.Boot, m.Pub, m.Cert, m.Sig, m.Want = r.str(), r.u64(), r.bytes(), r.bytes(), r.bytes(), r.bool()
	case *RelayMsg:
		if !r.open(relayFields) {
			break
		}
		m.Origin, m.Boot, m.Seq, m.Inner, m.Sig = r.str(), r.u64(), r.u64(), r.bytes(), r.bytes()
	case *DeltaMsg:
		if !r.open(deltaFields) {
			break
		}
		m.Epoch, m.Master, m.Version, m.Hash, m.PeersHash = r.u64(), r.str(), r.u64(), r.u32(), r.u32()
		m.Rows = decodeRows(&r)
		m.Stats = decodeStats(&r)
	}
	return r.err
}

func decodeRows(r *reader) Rows {
	n := r.bounded(MaxBoards, "row")
	if n < 0 {
		return nil
	}
	rows := make(Rows, n)
	for i := range rows {
		x := &rows[i]
		if !r.open(rowFields) {
			continue
		}
		x.Rank, x.Name, x.Linknum, x.Capacity, x.Weight = r.u16(), r.str(), r.u32(), r.u32(), r.u32()
		x.Runstate, x.CPU, x.Mem, x.Net, x.Disk, x.AgeMs = Runstate(r.u8()), r.u16(), r.u16(), r.u16(), r.u16(), r.u32()
	}
	return rows
}

func decodeStats(r *reader) ClassStats {
	n := r.bounded(MaxClasses, "class stat")
	if n < 0 {
		return nil
	}
	stats := make(ClassStats, n)
	for i := range stats {
		if r.open(classFields) {
			stats[i] = ClassStat{Name: r.str(), Depth: r.u32(), Dispatched: r.u64()}
		}
	}
	return stats
}

// reader is dec that keeps its first error.
type reader struct {
	d   *dec
	err error
}

func (r *reader) keep(err error) {
	if r.err == nil && err != nil {
		r.err = err
	}
}

// open reads a struct's header; false: the zero struct (nil or empty array) or an error.
func (r *reader) open(fields int) bool {
	if r.err != nil {
		return false
	}
	ok, err := r.d.structLen(fields)
	r.keep(err)
	return ok
}

// bounded reads an array header of at most limit elements: -1 for nil (or after an error).
func (r *reader) bounded(limit int, what string) int {
	if r.err != nil {
		return -1
	}
	n, err := r.d.arrayLen()
	if err == nil && n > limit {
		err = fmt.Errorf("%d %ss, over the limit of %d", n, what, limit)
	}
	r.keep(err)
	if r.err != nil {
		return -1
	}
	return n
}

func (r *reader) u64() uint64 {
	if r.err != nil {
		return 0
	}
	v, err := r.d.uint()
	r.keep(err)
	return v
}

func (r *reader) u32() uint32 { return uint32(r.u64()) }
func (r *reader) u16() uint16 { return uint16(r.u64()) }
func (r *reader) u8() uint8   { return uint8(r.u64()) }

func (r *reader) str() string {
	if r.err != nil {
		return ""
	}
	s, err := r.d.str()
	r.keep(err)
	return s
}

// bytes reads a bin (or str) field: nil for nil, as msgpack decodes a []byte.
func (r *reader) bytes() []byte {
	if r.err != nil {
		return nil
	}
	if r.d.off < len(r.d.b) && r.d.b[r.d.off] == mpNil {
		r.d.off++
		return nil
	}
	s, err := r.d.str()
	r.keep(err)
	return []byte(s)
}

func (r *reader) bool() bool {
	if r.err != nil {
		return false
	}
	v, err := r.d.bool()
	r.keep(err)
	return v
}
