package sched

import (
	"net/netip"
	"time"
)

// Values of sched.sticky, and the cookie the node sets with the chosen board.
const (
	StickyCookie   = "cookie"
	StickySourceIP = "source-ip"
	CookieName     = "ews_board"
)

// Sticky keeps a user on one board for the whole session: the board named in
// the request's cookie (Request.Sticky; the node sets CookieName to
// Ticket.Board), or for source-ip the board a client address was first sent
// to, remembered in a bounded table. A new user is placed by Next, the
// lightest board by the policy's measure (the socket-cluster paper: the
// first request to the least loaded server, every later one there); a new
// master without the table places a known user afresh the same way. Other
// boards joining, leaving or changing load never move a user; while the
// user's board is down or full the request falls back to Next without
// forgetting the user, who returns once the board is back.
type Sticky struct {
	Mode string // StickyCookie or StickySourceIP
	Next Policy
	// MaxClients bounds the source-ip table (default 65536): the
	// least recently seen half is forgotten when it fills.
	MaxClients int

	cur, old map[netip.Addr]string
}

// DefaultMaxClients is the default bound of the source-ip table.
const DefaultMaxClients = 1 << 16

// Select keeps the user's board when it is eligible, else asks Next.
func (s *Sticky) Select(pool []*Board, req *Request) *Board {
	if req != nil {
		switch s.Mode {
		case StickyCookie:
			if req.Sticky != "" {
				for _, b := range pool {
					if b.Name == req.Sticky {
						return b
					}
				}
			}
		case StickySourceIP:
			if req.Client.IsValid() {
				return s.byAddr(pool, req)
			}
		}
	}
	return s.Next.Select(pool, req)
}

func (s *Sticky) byAddr(pool []*Board, req *Request) *Board {
	addr := req.Client.Unmap()
	name, known := s.lookup(addr)
	if known {
		for _, b := range pool {
			if b.Name == name {
				return b
			}
		}
	}
	b := s.Next.Select(pool, req)
	if !known && b != nil {
		s.remember(addr, b.Name)
	}
	return b
}

// lookup finds a client, moving it to the current generation.
func (s *Sticky) lookup(addr netip.Addr) (string, bool) {
	if name, ok := s.cur[addr]; ok {
		return name, true
	}
	name, ok := s.old[addr]
	if ok {
		s.remember(addr, name)
	}
	return name, ok
}

// remember stores a client in the current generation; a full generation
// becomes the old one and the previous old one is dropped.
func (s *Sticky) remember(addr netip.Addr, name string) {
	limit := s.MaxClients
	if limit <= 0 {
		limit = DefaultMaxClients
	}
	if s.cur == nil || len(s.cur) >= max(limit/2, 1) {
		s.old, s.cur = s.cur, make(map[netip.Addr]string)
	}
	s.cur[addr] = name
}

// Observe passes reports on to Next.
func (s *Sticky) Observe(b *Board, now time.Time) bool { return observe(s.Next, b, now) }

// observe hands a report to p when it watches reports; true holds the board.
func observe(p Policy, b *Board, now time.Time) bool {
	if o, ok := p.(Observer); ok {
		return o.Observe(b, now)
	}
	return false
}
