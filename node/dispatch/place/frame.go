package place

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
)

// The placement channel's frames (docs/DESIGN.md, Placement channel), by
// which any board is a fast entry (docs/notes/fast-entry.md). A follower
// keeps one connection to the master, upgraded from HTTP (Path, Protocol),
// and asks over it where each request runs; it then forwards the request
// to that board itself. Every frame is
//
//	length uint16 (big endian, of what follows), type byte, payload
//
// Follower → master:
//
//	place (1): id uint32, client (family byte 0|4|16, the address), method
//	           (len byte, bytes), path (len uint16, bytes), pinned board
//	           (len byte), sticky board (len byte), excluded boards (count
//	           byte, then len byte + bytes each)
//	end   (2): id uint32 — the request is over (answered, failed, or the
//	           client left, placed or not): the master gives its slot back
//	ping  (3): empty — keep-alive when idle
//	lease (4): n uint16 — I want n more slots of my own board (lease.go)
//	return (5): n uint16 — n slots of my lease back
//	ran   (6): n uint32, method (len byte), path (len uint16) — n requests
//	           of this method and path ran on my lease since the last ran
//	           frame (sent only to a master that named HeaderRan in its 101)
//
// Master → follower:
//
//	placed (1): id uint32, epoch uint64, board (len byte), address (len byte)
//	shed   (2): id uint32, code byte (placeShed, placeNotMaster), retry-after
//	            ms uint32, class (len byte), reason (len byte)
//	pong   (3): empty
//	grant  (4): n uint16 — n more slots of your board are yours (0: none)
//	revoke (5): on byte — 1: run nothing more on the lease, give every
//	            slot back as it frees; 0: you may ask again
//
// Types are append-only; a frame of an unknown type, a short or long
// payload, or a field over its limit is a protocol error: the receiver
// closes the channel (the master then gives back every slot it placed on
// it; the follower's waiting requests take the path through the master).
const (
	// Path is where a follower opens the channel (GET with
	// Connection: Upgrade, Upgrade: Protocol and a peer mark).
	Path = "/api/cluster/place"
	// Protocol names the channel's protocol and version in Upgrade.
	Protocol = "ews-place/1"
	// HeaderRan in the master's 101 says it takes ran frames: a
	// follower sends them to no other (an older master would close the
	// channel on an unknown type).
	HeaderRan = "X-Ews-Place-Ran"
	// HeaderHandOn in a follower's upgrade says it hands a freed slot of
	// its lease to its own placement waiting in the master's queue
	// (Chan.FreeLease): only for such a follower does the master keep
	// the lease while its queue holds nothing but that follower's own
	// requests of the lowest class (an older follower would let them wait
	// behind requests that came after them).
	HeaderHandOn = "X-Ews-Place-Hand-On"
)

// Frame types, by direction. ONLY APPEND TO THESE LISTS.
const (
	framePlace  byte = 1 // follower → master
	frameEnd    byte = 2
	framePing   byte = 3
	frameLease  byte = 4
	frameReturn byte = 5
	frameRan    byte = 6

	framePlaced byte = 1 // master → follower
	frameShed   byte = 2
	framePong   byte = 3
	frameGrant  byte = 4
	frameRevoke byte = 5
)

// Codes of a shed frame.
const (
	placeShed      byte = 0 // the queue refused it: 503 with the class, reason and Retry-After
	placeNotMaster byte = 1 // this board is not (or no longer) master: take the path through the master
)

// Limits of the frames' fields; over them a frame is refused.
const (
	maxFrame     = 4 << 10
	maxMethod    = 16
	maxPlacePath = 2048
	maxName      = 63  // a board's name (state's limit)
	maxAddr      = 262 // a board's HTTP address
	maxExclude   = 8
	maxLabel     = 63 // class and reason
)

// errFrame is every malformed frame.
var errFrame = errors.New("place: bad placement frame")

// placeReq is a follower's question: where does this request run?
type placeReq struct {
	id      uint32
	client  netip.Addr
	method  string
	path    string
	board   string // pinned board
	sticky  string
	exclude []string
}

// placeAns is the master's answer.
type placeAns struct {
	id     uint32
	placed bool // false: shed
	epoch  uint64
	board  string
	addr   string
	code   byte // shed: placeShed or placeNotMaster
	retry  uint32
	class  string
	reason string
	leased bool // not on the wire: a slot of the follower's lease was handed to it (Chan.handOn)
}

// appendPlace appends a place frame; false when a field is over its limit
// (the request then takes the path through the master).
func appendPlace(dst []byte, q *placeReq) ([]byte, bool) {
	if len(q.method) > maxMethod || len(q.path) > maxPlacePath || len(q.board) > maxName ||
		len(q.sticky) > maxName || len(q.exclude) > maxExclude {
		return dst, false
	}
	for _, e := range q.exclude {
		if len(e) > maxName {
			return dst, false
		}
	}
	start := len(dst)
	dst = append(dst, 0, 0, framePlace)
	dst = binary.BigEndian.AppendUint32(dst, q.id)
	switch {
	case q.client.Is4() || q.client.Is4In6():
		a := q.client.Unmap().As4()
		dst = append(dst, 4)
		dst = append(dst, a[:]...)
	case q.client.Is6():
		a := q.client.As16()
		dst = append(dst, 16)
		dst = append(dst, a[:]...)
	default:
		dst = append(dst, 0)
	}
	dst = appendStr8(dst, q.method)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(q.path)))
	dst = append(dst, q.path...)
	dst = appendStr8(dst, q.board)
	dst = appendStr8(dst, q.sticky)
	dst = append(dst, byte(len(q.exclude)))
	for _, e := range q.exclude {
		dst = appendStr8(dst, e)
	}
	return finishFrame(dst, start)
}

// appendEnd appends an end frame for id.
func appendEnd(dst []byte, id uint32) []byte {
	dst = append(dst, 0, 5, frameEnd)
	return binary.BigEndian.AppendUint32(dst, id)
}

// appendEmpty appends a frame without payload (ping, pong).
func appendEmpty(dst []byte, typ byte) []byte { return append(dst, 0, 1, typ) }

// appendAns appends a placed or shed frame; false when a field is over
// its limit.
func appendAns(dst []byte, a *placeAns) ([]byte, bool) {
	start := len(dst)
	if a.placed {
		if len(a.board) > maxName || len(a.addr) > maxAddr {
			return dst, false
		}
		dst = append(dst, 0, 0, framePlaced)
		dst = binary.BigEndian.AppendUint32(dst, a.id)
		dst = binary.BigEndian.AppendUint64(dst, a.epoch)
		dst = appendStr8(dst, a.board)
		dst = appendStr16(dst, a.addr)
		return finishFrame(dst, start)
	}
	if len(a.class) > maxLabel || len(a.reason) > maxLabel {
		return dst, false
	}
	dst = append(dst, 0, 0, frameShed)
	dst = binary.BigEndian.AppendUint32(dst, a.id)
	dst = append(dst, a.code)
	dst = binary.BigEndian.AppendUint32(dst, a.retry)
	dst = appendStr8(dst, a.class)
	dst = appendStr8(dst, a.reason)
	return finishFrame(dst, start)
}

func appendStr8(dst []byte, s string) []byte {
	dst = append(dst, byte(len(s)))
	return append(dst, s...)
}

func appendStr16(dst []byte, s string) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(s)))
	return append(dst, s...)
}

// finishFrame writes the length of the frame that starts at start.
func finishFrame(dst []byte, start int) ([]byte, bool) {
	n := len(dst) - start - 2
	if n > maxFrame {
		return dst[:start], false
	}
	binary.BigEndian.PutUint16(dst[start:], uint16(n))
	return dst, true
}

// frameReader splits a byte stream into frames.
type frameReader struct {
	r   interface{ Read([]byte) (int, error) }
	buf []byte
	off int // start of the unread bytes
	end int
	// drained, when set, is called before each read from r: every frame
	// that arrived so far has been handled (the master then sends the
	// answers they queued in one write, frameWriter.release).
	drained func()
}

func newFrameReader(r interface{ Read([]byte) (int, error) }) *frameReader {
	return &frameReader{r: r, buf: make([]byte, 16<<10)}
}

// next returns the next frame's type and payload, valid until the next
// call. A length of 0 or over maxFrame is a protocol error.
func (fr *frameReader) next() (byte, []byte, error) {
	for {
		if avail := fr.end - fr.off; avail >= 2 {
			n := int(binary.BigEndian.Uint16(fr.buf[fr.off:]))
			if n == 0 || n > maxFrame {
				return 0, nil, fmt.Errorf("%w: length %d", errFrame, n)
			}
			if avail >= 2+n {
				f := fr.buf[fr.off+2 : fr.off+2+n]
				fr.off += 2 + n
				return f[0], f[1:], nil
			}
		}
		if fr.off > 0 { // move the partial frame to the front
			fr.end = copy(fr.buf, fr.buf[fr.off:fr.end])
			fr.off = 0
		}
		if fr.drained != nil {
			fr.drained()
		}
		n, err := fr.r.Read(fr.buf[fr.end:])
		fr.end += n
		if err != nil && n == 0 {
			return 0, nil, err
		}
	}
}

// cursor reads a frame's fields; any read past the end sets bad.
type cursor struct {
	b   []byte
	bad bool
}

func (c *cursor) take(n int) []byte {
	if c.bad || n > len(c.b) {
		c.bad = true
		return nil
	}
	v := c.b[:n]
	c.b = c.b[n:]
	return v
}

func (c *cursor) u8() byte {
	if v := c.take(1); v != nil {
		return v[0]
	}
	return 0
}

func (c *cursor) u16() int {
	if v := c.take(2); v != nil {
		return int(binary.BigEndian.Uint16(v))
	}
	return 0
}

func (c *cursor) u32() uint32 {
	if v := c.take(4); v != nil {
		return binary.BigEndian.Uint32(v)
	}
	return 0
}

func (c *cursor) u64() uint64 {
	if v := c.take(8); v != nil {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// str8 reads a string of at most max bytes with a one-byte length.
func (c *cursor) str8(max int) string {
	n := int(c.u8())
	if n > max {
		c.bad = true
		return ""
	}
	return string(c.take(n))
}

func (c *cursor) str16(max int) string {
	n := c.u16()
	if n > max {
		c.bad = true
		return ""
	}
	return string(c.take(n))
}

// done reports a frame read exactly to its end.
func (c *cursor) done() bool { return !c.bad && len(c.b) == 0 }

// decodePlace reads a place frame's payload.
func decodePlace(p []byte, q *placeReq) error {
	c := cursor{b: p}
	q.id = c.u32()
	switch fam := c.u8(); fam {
	case 0:
		q.client = netip.Addr{}
	case 4:
		if v := c.take(4); v != nil {
			q.client = netip.AddrFrom4([4]byte(v))
		}
	case 16:
		if v := c.take(16); v != nil {
			q.client = netip.AddrFrom16([16]byte(v))
		}
	default:
		return fmt.Errorf("%w: address family %d", errFrame, fam)
	}
	q.method = c.str8(maxMethod)
	q.path = c.str16(maxPlacePath)
	q.board = c.str8(maxName)
	q.sticky = c.str8(maxName)
	n := int(c.u8())
	if n > maxExclude {
		return fmt.Errorf("%w: %d excluded boards (at most %d)", errFrame, n, maxExclude)
	}
	q.exclude = q.exclude[:0]
	for range n {
		q.exclude = append(q.exclude, c.str8(maxName))
	}
	if !c.done() {
		return fmt.Errorf("%w: place", errFrame)
	}
	if q.method == "" || q.path == "" || q.path[0] != '/' {
		return fmt.Errorf("%w: place without a method or an absolute path", errFrame)
	}
	return nil
}

// decodeEnd reads an end frame's payload.
func decodeEnd(p []byte) (uint32, error) {
	c := cursor{b: p}
	id := c.u32()
	if !c.done() {
		return 0, fmt.Errorf("%w: end", errFrame)
	}
	return id, nil
}

// decodeAns reads a placed or shed frame's payload.
func decodeAns(typ byte, p []byte, a *placeAns) error {
	c := cursor{b: p}
	*a = placeAns{id: c.u32()}
	switch typ {
	case framePlaced:
		a.placed = true
		a.epoch = c.u64()
		a.board = c.str8(maxName)
		a.addr = c.str16(maxAddr)
		if c.done() && (a.board == "" || a.addr == "") {
			return fmt.Errorf("%w: placed without a board or an address", errFrame)
		}
	case frameShed:
		a.code = c.u8()
		a.retry = c.u32()
		a.class = c.str8(maxLabel)
		a.reason = c.str8(maxLabel)
		if c.done() && a.code > placeNotMaster {
			return fmt.Errorf("%w: shed code %d", errFrame, a.code)
		}
	default:
		return fmt.Errorf("%w: type %d", errFrame, typ)
	}
	if !c.done() {
		return fmt.Errorf("%w: answer of type %d", errFrame, typ)
	}
	return nil
}

// appendCount appends a frame of typ with a count (lease, return, grant).
func appendCount(dst []byte, typ byte, n uint16) []byte {
	dst = append(dst, 0, 3, typ)
	return binary.BigEndian.AppendUint16(dst, n)
}

// decodeCount reads a count frame's payload.
func decodeCount(p []byte) (int, error) {
	c := cursor{b: p}
	n := c.u16()
	if !c.done() {
		return 0, fmt.Errorf("%w: count", errFrame)
	}
	return n, nil
}

// decodeRevoke reads a revoke frame's payload.
func decodeRevoke(p []byte) (bool, error) {
	if len(p) != 1 || p[0] > 1 {
		return false, fmt.Errorf("%w: revoke", errFrame)
	}
	return p[0] == 1, nil
}

// ranReq is a ran frame: n requests of method and path ran on a lease.
type ranReq struct {
	n            uint32
	method, path string
}

// appendRan appends a ran frame; false when a field is over its limit
// (that count is then left out).
func appendRan(dst []byte, r *ranReq) ([]byte, bool) {
	if r.n == 0 || len(r.method) > maxMethod || len(r.path) > maxPlacePath {
		return dst, false
	}
	start := len(dst)
	dst = append(dst, 0, 0, frameRan)
	dst = binary.BigEndian.AppendUint32(dst, r.n)
	dst = appendStr8(dst, r.method)
	dst = appendStr16(dst, r.path)
	return finishFrame(dst, start)
}

// decodeRan reads a ran frame's payload.
func decodeRan(p []byte, r *ranReq) error {
	c := cursor{b: p}
	r.n = c.u32()
	r.method = c.str8(maxMethod)
	r.path = c.str16(maxPlacePath)
	if !c.done() {
		return fmt.Errorf("%w: ran", errFrame)
	}
	if r.n == 0 || r.method == "" || r.path == "" || r.path[0] != '/' {
		return fmt.Errorf("%w: ran without a count, a method or an absolute path", errFrame)
	}
	return nil
}
