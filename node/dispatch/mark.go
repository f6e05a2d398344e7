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
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Where a mark travels.
const (
	// HeaderMark carries the master's dispatch mark to the chosen board.
	HeaderMark = "X-Ews-Dispatch"
	// QueryMark carries the mark in redirect mode (a browser does not
	// resend custom headers after a 307); the board strips it.
	QueryMark = "_ews_mark"
	// HeaderVia is set by a non-master that passes a request to the
	// master: a signed via mark naming the client address. It is also the
	// loop guard: a non-master refuses a request that carries it.
	HeaderVia = "X-Ews-Via"
)

// Kind tells a dispatch mark (the master sends a request to a board) from a
// via mark (a non-master passes a request to the master).
type Kind byte

const (
	KindDispatch Kind = 'D'
	KindVia      Kind = 'V'
)

// DefaultTTL is how long a mark stays valid.
const DefaultTTL = 5 * time.Second

// Reasons a mark is refused (metrics label and error text).
const (
	RefuseMalformed = "malformed"   // not a mark at all
	RefuseSignature = "signature"   // forged, tampered or signed under another key
	RefuseExpired   = "expired"     // past its expiry, or dated more than two TTLs ahead
	RefuseTarget    = "target"      // meant for another board
	RefusePath      = "path"        // signed for another method or path
	RefuseKind      = "kind"        // a via mark used as a dispatch mark or back
	RefuseStale     = "stale-epoch" // signed by a master of an older epoch
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
	for _, r := range []string{RefuseMalformed, RefuseSignature, RefuseExpired, RefuseTarget, RefusePath, RefuseKind, RefuseStale} {
		refusals[r] = &MarkError{Reason: r}
	}
}

// Mark is the content of a verified mark.
type Mark struct {
	Kind   Kind
	Epoch  uint64    // the master's epoch when it signed
	Seq    uint64    // the signer's sequence number
	Expiry time.Time // refused after this (plus the Marker's skew)
	Target string    // the board meant to run it (dispatch) or the master (via); not set by Verify
	Client netip.Addr
}

// Wire layout of a mark before base64 (RawURLEncoding):
//
//	0      version (1)
//	1      kind
//	2..9   epoch, big endian
//	10..17 sequence
//	18..25 expiry, unix nanoseconds
//	26..41 first 16 bytes of SHA-256(method " " path)
//	42..57 client address, 16 bytes (IPv4 mapped)
//	58     client address present (0/1)
//	59     target length n (1..maxTarget)
//	60..   target name
//	then   HMAC-SHA256 of all the above (32 bytes)
const (
	markVersion = 1
	offEpoch    = 2
	offSeq      = 10
	offExpiry   = 18
	offPath     = 26
	pathLen     = 16
	offClient   = 42
	offHasAddr  = 58
	offTLen     = 59
	offTarget   = 60
	macLen      = sha256.Size
	maxTarget   = 64
	maxRaw      = offTarget + maxTarget + macLen
	maxEncoded  = (maxRaw*8 + 5) / 6
)

// Marker signs and verifies marks under a key derived from the cluster key.
// Safe for concurrent use.
//
// A mark is valid until its expiry for any number of uses: replay within the
// TTL is accepted on purpose. It can only run the same method and path on
// the same board (no amplification beyond what its holder could send to the
// master), and device actions carry an Idempotency-Key that the device API
// replays, so a repeated mark never runs an action twice. Boards' clocks must
// agree within the TTL plus Skew (boards without a real-time clock need NTP).
type Marker struct {
	key  []byte
	ttl  time.Duration
	skew time.Duration
	now  func() time.Time
	seq  atomic.Uint64
	pool sync.Pool // *scratch
}

// scratch is one Sign/Verify call's buffers, pooled so neither allocates.
type scratch struct {
	mac hash.Hash
	raw [maxRaw]byte
	enc [maxEncoded]byte
	sum [sha256.Size]byte
	in  []byte // method " " path
}

// MarkOptions tune a Marker; zero values take the defaults.
type MarkOptions struct {
	TTL  time.Duration    // default DefaultTTL
	Skew time.Duration    // clock difference tolerated between boards; default 0
	Now  func() time.Time // default time.Now
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
	m := &Marker{key: append([]byte(nil), key...), ttl: opt.TTL, skew: opt.Skew, now: opt.Now}
	if m.ttl <= 0 {
		m.ttl = DefaultTTL
	}
	if m.now == nil {
		m.now = time.Now
	}
	m.pool.New = func() any { return &scratch{mac: hmac.New(sha256.New, m.key)} }
	return m, nil
}

// TTL is how long the marks this Marker signs stay valid.
func (m *Marker) TTL() time.Duration { return m.ttl }

// pathDigest writes the first pathLen bytes of SHA-256(method " " path) to dst.
func (s *scratch) pathDigest(dst []byte, method, path string) {
	s.in = append(append(append(s.in[:0], method...), ' '), path...)
	s.sum = sha256.Sum256(s.in)
	copy(dst, s.sum[:pathLen])
}

// Sign appends a fresh mark (base64url, no padding) to dst: kind, the
// master's epoch, the board that must run it (target), the request's method
// and path, and the client address (via marks; may be zero).
func (m *Marker) Sign(dst []byte, kind Kind, epoch uint64, target, method, path string, client netip.Addr) []byte {
	if len(target) == 0 || len(target) > maxTarget {
		return dst // no valid mark for such a name: the receiver refuses it
	}
	s := m.pool.Get().(*scratch)
	raw := s.raw[:offTarget+len(target)]
	raw[0] = markVersion
	raw[1] = byte(kind)
	binary.BigEndian.PutUint64(raw[offEpoch:], epoch)
	binary.BigEndian.PutUint64(raw[offSeq:], m.seq.Add(1))
	binary.BigEndian.PutUint64(raw[offExpiry:], uint64(m.now().Add(m.ttl).UnixNano()))
	s.pathDigest(raw[offPath:offPath+pathLen], method, path)
	a16 := client.As16()
	copy(raw[offClient:offClient+16], a16[:])
	raw[offHasAddr] = 0
	if client.IsValid() {
		raw[offHasAddr] = 1
	}
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
func (m *Marker) SignString(kind Kind, epoch uint64, target, method, path string, client netip.Addr) string {
	var buf [maxEncoded]byte
	return string(m.Sign(buf[:0], kind, epoch, target, method, path, client))
}

// Verify checks the mark r carries (header HeaderMark, else query
// parameter QueryMark) for a dispatch to board self. ErrNoMark: none;
// *MarkError: refused (answer 403).
func (m *Marker) Verify(r *http.Request, self string) (Mark, error) {
	tok := r.Header.Get(HeaderMark)
	if tok == "" {
		var ok bool
		if tok, ok = queryMark(r.URL.RawQuery); !ok {
			return Mark{}, ErrNoMark
		}
	}
	return m.VerifyToken(tok, KindDispatch, r.Method, r.URL.Path, self)
}

// VerifyToken checks one encoded mark: signature (constant time), kind,
// expiry, target and method+path. It does not allocate.
func (m *Marker) VerifyToken(tok string, kind Kind, method, path, self string) (Mark, error) {
	if len(tok) == 0 || len(tok) > maxEncoded {
		return Mark{}, refusal(RefuseMalformed)
	}
	s := m.pool.Get().(*scratch)
	defer m.pool.Put(s)
	n := copy(s.enc[:], tok)
	raw := s.raw[:]
	rn, err := base64.RawURLEncoding.Decode(raw, s.enc[:n])
	if err != nil || rn < offTarget+1+macLen {
		return Mark{}, refusal(RefuseMalformed)
	}
	raw = raw[:rn]
	body, sig := raw[:rn-macLen], raw[rn-macLen:]
	if body[0] != markVersion || int(body[offTLen]) != len(body)-offTarget {
		return Mark{}, refusal(RefuseMalformed)
	}
	s.mac.Reset()
	s.mac.Write(body)
	if !hmac.Equal(s.mac.Sum(s.sum[:0]), sig) {
		return Mark{}, refusal(RefuseSignature)
	}
	mk := Mark{
		Kind:   Kind(body[1]),
		Epoch:  binary.BigEndian.Uint64(body[offEpoch:]),
		Seq:    binary.BigEndian.Uint64(body[offSeq:]),
		Expiry: time.Unix(0, int64(binary.BigEndian.Uint64(body[offExpiry:]))),
	}
	if body[offHasAddr] == 1 {
		mk.Client = netip.AddrFrom16([16]byte(body[offClient : offClient+16])).Unmap()
	}
	if mk.Kind != kind {
		return mk, refusal(RefuseKind)
	}
	// expired, or dated so far ahead that the signer's clock must be off
	// by more than a TTL (its marks would otherwise live that much longer);
	// a verifier that lags the signer by less than a TTL accepts
	if now := m.now(); now.After(mk.Expiry.Add(m.skew)) || mk.Expiry.After(now.Add(2*m.ttl+m.skew)) {
		return mk, refusal(RefuseExpired)
	}
	if string(body[offTarget:]) != self {
		return mk, refusal(RefuseTarget)
	}
	var want [pathLen]byte
	s.pathDigest(want[:], method, path)
	if !hmac.Equal(want[:], body[offPath:offPath+pathLen]) {
		return mk, refusal(RefusePath)
	}
	return mk, nil
}

// queryMark finds the QueryMark parameter in a raw query.
func queryMark(q string) (string, bool) {
	for q != "" {
		var p string
		p, q, _ = strings.Cut(q, "&")
		if v, ok := strings.CutPrefix(p, QueryMark+"="); ok {
			return v, true
		}
	}
	return "", false
}

// stripQueryMark removes every QueryMark parameter from a raw query.
func stripQueryMark(q string) string {
	var b strings.Builder
	for q != "" {
		var p string
		p, q, _ = strings.Cut(q, "&")
		if p == "" || strings.HasPrefix(p, QueryMark+"=") {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p)
	}
	return b.String()
}
