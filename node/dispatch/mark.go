package dispatch

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
)

// Where a mark travels.
const (
	// HeaderMark carries the master's dispatch mark to the chosen board.
	HeaderMark = "X-Ews-Dispatch"
	// QueryMark carries the mark in redirect mode (a browser does not
	// resend custom headers after a 307); the board strips it. Only
	// KindRedirect marks are accepted there, and only in redirect mode.
	QueryMark = "_ews_mark"
	// HeaderVia is set by a non-master that passes a request to the
	// master: a signed via mark naming the client address. It is also the
	// loop guard: a non-master refuses a request that carries it.
	HeaderVia = "X-Ews-Via"
	// HeaderRefused names the reason on a 403 for a refused mark.
	HeaderRefused = httpx.HeaderRefused
)

// Kind tells a dispatch mark (the master sends a request to a board) from a
// via mark (a non-master passes a request to the master) and from a
// redirect mark (the master sends the client to a board, mark in the query).
type Kind byte

const (
	KindDispatch Kind = 'D'
	KindVia      Kind = 'V'
	KindRedirect Kind = 'R'
)

// DefaultTTL is how long a mark stays valid.
const DefaultTTL = 5 * time.Second

// Reasons a mark is refused (metrics label and error text).
const (
	RefuseMalformed = "malformed"   // not a mark at all
	RefuseSignature = "signature"   // forged, tampered or signed under another key
	RefuseExpired   = "expired"     // past its expiry, or dated more than two TTLs ahead
	RefuseTarget    = "target"      // meant for another board
	RefusePath      = "path"        // signed for another method, path, query or body
	RefuseKind      = "kind"        // a via mark used as a dispatch mark or back
	RefuseStale     = "stale-epoch" // signed by a master of an older epoch
	RefuseReplayed  = "replayed"    // already used once on this board
	// the board's listener: the request header did not arrive in time (408); it never ran
	RefuseHeadTimeout = httpx.RefusedHeadTimeout
	RefuseClient      = "client" // the client it was signed for is not the one sending it
	RefuseQuery       = "query"  // a mark in the query string outside redirect mode
)

// ErrNoMark is returned by Verify when the request carries no mark.
var ErrNoMark = errors.New("dispatch: no mark")

// MarkError is a refused mark.
type MarkError struct{ Reason string }

func (e *MarkError) Error() string { return "dispatch: mark refused: " + e.Reason }

// refusals are shared so Verify does not allocate on the refusal path.
var refusals = map[string]*MarkError{}

func refusal(reason string) *MarkError { return refusals[reason] }

func init() {
	for _, r := range []string{RefuseMalformed, RefuseSignature, RefuseExpired, RefuseTarget, RefusePath,
		RefuseKind, RefuseStale, RefuseReplayed, RefuseClient, RefuseQuery} {
		refusals[r] = &MarkError{Reason: r}
	}
}

// BodyMode says how a mark binds the request body.
type BodyMode byte

const (
	BodyNone   BodyMode = 0 // no body (Content-Length 0)
	BodyDigest BodyMode = 1 // SHA-256 of the body (bodies up to MaxDigestBody)
	BodyLength BodyMode = 2 // only the Content-Length (-1: chunked): larger bodies stream
)

// MaxDigestBody is the largest body a mark binds by digest; a larger one
// (or one of unknown length) is bound by its Content-Length only, because
// the master streams it and cannot hash it before sending the mark.
const MaxDigestBody = DefaultReplayMax

// Binding is what a mark is bound to besides kind, epoch and target: the
// request line, a digest or the length of the body, and the client.
type Binding struct {
	Method, Path string
	Query        string // raw query without any QueryMark parameter
	Body         BodyMode
	Length       int64             // BodyLength: the Content-Length
	Sum          [sha256.Size]byte // BodyDigest: SHA-256 of the body
	Client       netip.Addr        // the client as the first board saw it; may be zero
}

// Mark is the content of a verified mark.
type Mark struct {
	Kind   Kind
	Epoch  uint64    // the master's epoch when it signed
	Seq    uint64    // the signer's sequence number
	Expiry time.Time // refused after this (plus the Marker's skew)
	Body   BodyMode  // how the body is bound
	Client netip.Addr
	id     [markIDLen]byte
}

// Wire layout of a mark before base64 (RawURLEncoding):
//
//	0      version (2)
//	1      kind
//	2..9   epoch, big endian
//	10..17 sequence
//	18..25 expiry, unix nanoseconds
//	26..41 first 16 bytes of SHA-256 of the binding (method, path, query, body)
//	42..57 client address, 16 bytes (IPv4 mapped)
//	58     client address present (0/1)
//	59     body mode
//	60     target length n (1..maxTarget)
//	61..   target name
//	then   HMAC-SHA256 of all the above (32 bytes); its first 16 bytes are the mark's id
const (
	markVersion = 2
	offEpoch    = 2
	offSeq      = 10
	offExpiry   = 18
	offPath     = 26
	pathLen     = 16
	offClient   = 42
	offHasAddr  = 58
	offBody     = 59
	offTLen     = 60
	offTarget   = 61
	macLen      = sha256.Size
	markIDLen   = 16
	maxTarget   = 64
	maxRaw      = offTarget + maxTarget + macLen
	maxEncoded  = (maxRaw*8 + 5) / 6
)

// Marker signs and verifies marks under a key derived from the cluster key.
// Safe for concurrent use.
//
// A mark is bound to the method, path, query and body of the request it was
// signed for, the client address the first board saw, the target board and
// the master's epoch, and each board accepts it once (Verify remembers the
// ids of the marks it accepted until they expire). Boards' Now must agree
// within the TTL plus Skew: a board's Now is cluster time, its own clock
// corrected to the master's as measured on the gossip probes
// (internal/clock; docs/DESIGN.md, Time), so boards whose own clocks
// disagree by months still accept each other's marks.
type Marker struct {
	keys atomic.Pointer[markKeys] // what it signs and verifies with (SetKeys)
	ttl  time.Duration
	skew time.Duration
	now  func() time.Time
	seq  atomic.Uint64
	pool sync.Pool // *scratch
	seen *seenMarks
	// opened counts the marks decoded and checked (Verify, VerifyToken):
	// tests hold the Front to one check per mark per board.
	opened atomic.Int64
}

// scratch is one Sign/Verify call's buffers, pooled so neither allocates.
type scratch struct {
	set *markKeys   // the keys mac and alt are of
	mac hash.Hash   // under the signing key
	alt []hash.Hash // under the keys also accepted
	raw [maxRaw]byte
	enc [maxEncoded]byte
	sum [sha256.Size]byte
	in  []byte // the binding's bytes
}

// MarkOptions tune a Marker; zero values take the defaults.
type MarkOptions struct {
	TTL  time.Duration    // default DefaultTTL
	Skew time.Duration    // clock difference tolerated between boards; default 0
	Now  func() time.Time // cluster time (clock.Clock.Now); default time.Now
	// Seen is how many accepted mark ids are remembered to refuse a replay;
	// default DefaultSeen. Past it the oldest is forgotten early.
	Seen int
}

// keyInfo labels the HKDF derivation so the mark key differs from the
// gossip key even though both come from the cluster key.
const keyInfo = "ews dispatch mark v1"

// DeriveKey derives the 32-byte mark key from the cluster key (HKDF-SHA256).
func DeriveKey(clusterKey []byte) ([]byte, error) {
	if len(clusterKey) == 0 {
		return nil, errors.New("dispatch: empty cluster key")
	}
	return hkdf.Key(sha256.New, clusterKey, nil, keyInfo, 32)
}

// RandomKey returns a fresh random mark key: for a standalone board, whose
// marks only it ever verifies.
func RandomKey() []byte {
	k := make([]byte, 32)
	_, _ = rand.Read(k) // never fails (crypto/rand)
	return k
}

// NewMarker returns a Marker that signs with key (from DeriveKey or RandomKey).
func NewMarker(key []byte, opt MarkOptions) (*Marker, error) {
	if len(key) < 16 {
		return nil, errors.New("dispatch: mark key shorter than 16 bytes")
	}
	m := &Marker{ttl: opt.TTL, skew: opt.Skew, now: opt.Now}
	m.keys.Store(&markKeys{sign: append([]byte(nil), key...)})
	if m.ttl <= 0 {
		m.ttl = DefaultTTL
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.seen = newSeenMarks(opt.Seen)
	m.pool.New = func() any { return &scratch{} }
	return m, nil
}

// markKeys are the keys of a Marker: it signs with sign and accepts
// marks under sign or any of also.
type markKeys struct {
	sign []byte
	also [][]byte
}

// SetKeys makes sign the key this Marker signs with, and accepts marks
// under sign and each of also: during a rotation of the cluster's
// secrets the boards accept both the old and the new key, then only the
// new (node/rotate; docs/NOTES.md "Security"). Keys shorter than 16 bytes
// are refused.
func (m *Marker) SetKeys(sign []byte, also ...[]byte) error {
	if len(sign) < 16 {
		return errors.New("dispatch: mark key shorter than 16 bytes")
	}
	ks := &markKeys{sign: append([]byte(nil), sign...)}
	for _, k := range also {
		if len(k) < 16 {
			return errors.New("dispatch: mark key shorter than 16 bytes")
		}
		ks.also = append(ks.also, append([]byte(nil), k...))
	}
	m.keys.Store(ks)
	return nil
}

// scratch is a pooled scratch whose MACs are under the current keys.
func (m *Marker) scratch() *scratch {
	s := m.pool.Get().(*scratch)
	if ks := m.keys.Load(); s.set != ks {
		s.set, s.mac, s.alt = ks, hmac.New(sha256.New, ks.sign), s.alt[:0]
		for _, k := range ks.also {
			s.alt = append(s.alt, hmac.New(sha256.New, k))
		}
	}
	return s
}

// TTL is how long the marks this Marker signs stay valid.
func (m *Marker) TTL() time.Duration { return m.ttl }

// bindingDigest writes the first pathLen bytes of SHA-256 of b (without
// its client, which the mark carries in clear) to dst.
func (s *scratch) bindingDigest(dst []byte, b *Binding) {
	in := append(s.in[:0], b.Method...)
	in = append(in, ' ')
	in = append(in, b.Path...)
	in = append(in, '?')
	in = append(in, b.Query...)
	in = append(in, 0, byte(b.Body))
	switch b.Body {
	case BodyDigest:
		in = append(in, b.Sum[:]...)
	case BodyLength:
		in = binary.BigEndian.AppendUint64(in, uint64(b.Length))
	}
	s.in = in
	s.sum = sha256.Sum256(in)
	copy(dst, s.sum[:pathLen])
}

// Sign appends a fresh mark (base64url, no padding) to dst: kind, the
// master's epoch, the board that must run it (target) and the binding.
func (m *Marker) Sign(dst []byte, kind Kind, epoch uint64, target string, b *Binding) []byte {
	return m.signUntil(dst, kind, epoch, target, b, m.now().Add(m.ttl))
}

// signUntil is Sign with the mark's expiry given (assignments outlive the TTL).
func (m *Marker) signUntil(dst []byte, kind Kind, epoch uint64, target string, b *Binding, expiry time.Time) []byte {
	if len(target) == 0 || len(target) > maxTarget {
		return dst // no valid mark for such a name: the receiver refuses it
	}
	s := m.scratch()
	raw := s.raw[:offTarget+len(target)]
	raw[0] = markVersion
	raw[1] = byte(kind)
	binary.BigEndian.PutUint64(raw[offEpoch:], epoch)
	binary.BigEndian.PutUint64(raw[offSeq:], m.seq.Add(1))
	binary.BigEndian.PutUint64(raw[offExpiry:], uint64(expiry.UnixNano()))
	s.bindingDigest(raw[offPath:offPath+pathLen], b)
	a16 := b.Client.As16()
	copy(raw[offClient:offClient+16], a16[:])
	raw[offHasAddr] = 0
	if b.Client.IsValid() {
		raw[offHasAddr] = 1
	}
	raw[offBody] = byte(b.Body)
	raw[offTLen] = byte(len(target))
	copy(raw[offTarget:], target)
	s.mac.Reset()
	s.mac.Write(raw)
	raw = s.mac.Sum(raw)
	n := base64.RawURLEncoding.EncodedLen(len(raw))
	base64.RawURLEncoding.Encode(s.enc[:n], raw)
	dst = append(dst, s.enc[:n]...)
	m.pool.Put(s)
	return dst
}

// SignString is Sign returning a string (one allocation).
func (m *Marker) SignString(kind Kind, epoch uint64, target string, b *Binding) string {
	var buf [maxEncoded]byte
	return string(m.signUntil(buf[:0], kind, epoch, target, b, m.now().Add(m.ttl)))
}

// VerifyToken checks one encoded mark: signature (constant time), kind,
// expiry, target and binding (b.Client is not compared: the caller checks
// the mark's Client against what it sees). It does not allocate and does
// not use the mark up (Verify does).
func (m *Marker) VerifyToken(tok string, kind Kind, self string, b *Binding) (Mark, error) {
	s := m.scratch()
	defer m.pool.Put(s)
	mk, bound, err := m.open(s, tok, kind, self)
	if err != nil {
		return mk, err
	}
	if mk.Body != b.Body {
		return mk, refusal(RefusePath)
	}
	var want [pathLen]byte
	s.bindingDigest(want[:], b)
	if !hmac.Equal(want[:], bound[:]) {
		return mk, refusal(RefusePath)
	}
	return mk, nil
}

// open decodes tok and checks its signature, kind, expiry and target; it
// returns the mark and its binding digest.
func (m *Marker) open(s *scratch, tok string, kind Kind, self string) (Mark, [pathLen]byte, error) {
	return m.openTTL(s, tok, kind, self, m.ttl)
}

// openTTL is open for marks that live up to ttl (assignments).
func (m *Marker) openTTL(s *scratch, tok string, kind Kind, self string, ttl time.Duration) (Mark, [pathLen]byte, error) {
	m.opened.Add(1)
	var bound [pathLen]byte
	if len(tok) == 0 || len(tok) > maxEncoded {
		return Mark{}, bound, refusal(RefuseMalformed)
	}
	n := copy(s.enc[:], tok)
	raw := s.raw[:]
	rn, err := base64.RawURLEncoding.Decode(raw, s.enc[:n])
	if err != nil || rn < offTarget+1+macLen {
		return Mark{}, bound, refusal(RefuseMalformed)
	}
	raw = raw[:rn]
	body, sig := raw[:rn-macLen], raw[rn-macLen:]
	if body[0] != markVersion || int(body[offTLen]) != len(body)-offTarget || body[offBody] > byte(BodyLength) {
		return Mark{}, bound, refusal(RefuseMalformed)
	}
	if !s.signed(body, sig) {
		return Mark{}, bound, refusal(RefuseSignature)
	}
	mk := Mark{
		Kind:   Kind(body[1]),
		Epoch:  binary.BigEndian.Uint64(body[offEpoch:]),
		Seq:    binary.BigEndian.Uint64(body[offSeq:]),
		Expiry: time.Unix(0, int64(binary.BigEndian.Uint64(body[offExpiry:]))),
		Body:   BodyMode(body[offBody]),
	}
	copy(mk.id[:], sig[:markIDLen])
	copy(bound[:], body[offPath:offPath+pathLen])
	if body[offHasAddr] == 1 {
		mk.Client = netip.AddrFrom16([16]byte(body[offClient : offClient+16])).Unmap()
	}
	if mk.Kind != kind {
		return mk, bound, refusal(RefuseKind)
	}
	// expired, or dated so far ahead that the signer's clock must be off
	// by more than a TTL (its marks would otherwise live that much longer);
	// a verifier that lags the signer by less than a TTL accepts
	if now := m.now(); now.After(mk.Expiry.Add(m.skew)) || mk.Expiry.After(now.Add(2*ttl+m.skew)) {
		return mk, bound, refusal(RefuseExpired)
	}
	if string(body[offTarget:]) != self {
		return mk, bound, refusal(RefuseTarget)
	}
	return mk, bound, nil
}

// signed reports whether sig is body's MAC under one of the keys.
func (s *scratch) signed(body, sig []byte) bool {
	s.mac.Reset()
	s.mac.Write(body)
	if hmac.Equal(s.mac.Sum(s.sum[:0]), sig) {
		return true
	}
	for _, h := range s.alt {
		h.Reset()
		h.Write(body)
		if hmac.Equal(h.Sum(s.sum[:0]), sig) {
			return true
		}
	}
	return false
}

// use records mk's id; false if it was used before (a replay).
func (m *Marker) use(mk Mark) bool {
	return m.seen.add(mk.id, mk.Expiry.Add(m.skew), m.now())
}

// queryMark finds the QueryMark parameter in a raw query.
func queryMark(q string) (string, bool) { return queryParam(q, QueryMark) }

// stripQueryMark removes every QueryMark parameter from a raw query.
func stripQueryMark(q string) string { return stripParam(q, QueryMark) }

// queryParam finds the key parameter in a raw query.
func queryParam(q, key string) (string, bool) {
	for q != "" {
		var p string
		p, q, _ = strings.Cut(q, "&")
		if v, ok := cutParam(p, key); ok {
			return v, true
		}
	}
	return "", false
}

// stripParam removes every key parameter from a raw query.
func stripParam(q, key string) string {
	if !strings.Contains(q, key) {
		return q
	}
	var b strings.Builder
	for q != "" {
		var p string
		p, q, _ = strings.Cut(q, "&")
		if _, ok := cutParam(p, key); p == "" || ok {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p)
	}
	return b.String()
}

// cutParam is the value of parameter p ("key=value") when it is key's.
func cutParam(p, key string) (string, bool) {
	if len(p) <= len(key) || p[len(key)] != '=' || p[:len(key)] != key {
		return "", false
	}
	return p[len(key)+1:], true
}
