package dispatch

import (
	"sync"
	"time"
)

// DefaultSeen is how many accepted mark ids a board remembers: a board
// runs at most a few hundred requests a second, so 8192 ids cover the
// 5 s TTL several times over (24 bytes an id plus the map).
const DefaultSeen = 8192

// seenMarks is the bounded set of mark ids accepted on this board, each
// kept until its mark expires. When full, the oldest id is forgotten first
// (ids arrive nearly in expiry order, since every mark has the same TTL).
type seenMarks struct {
	mu   sync.Mutex
	ids  map[[markIDLen]byte]struct{}
	ring []seenEntry // insertion order, len == cap once full
	head int         // oldest entry
	n    int
}

type seenEntry struct {
	id  [markIDLen]byte
	exp time.Time
}

func newSeenMarks(size int) *seenMarks {
	if size <= 0 {
		size = DefaultSeen
	}
	return &seenMarks{ids: make(map[[markIDLen]byte]struct{}, min(size, 1024)), ring: make([]seenEntry, size)}
}

// add records id until exp; false if it is already recorded.
func (s *seenMarks) add(id [markIDLen]byte, exp, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.n > 0 && now.After(s.ring[s.head].exp) { // expired: drop from the front
		s.pop()
	}
	if _, dup := s.ids[id]; dup {
		return false
	}
	if s.n == len(s.ring) {
		s.pop() // full: forget the oldest early
	}
	s.ring[(s.head+s.n)%len(s.ring)] = seenEntry{id: id, exp: exp}
	s.n++
	s.ids[id] = struct{}{}
	return true
}

func (s *seenMarks) pop() {
	delete(s.ids, s.ring[s.head].id)
	s.head = (s.head + 1) % len(s.ring)
	s.n--
}

// len is the number of ids remembered now.
func (s *seenMarks) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}
