package sched

import (
	"time"
)

// Values of sched.sticky, and the cookie the node sets with the chosen board.
const (
	StickyCookie   = "cookie"
	StickySourceIP = "source-ip"
	CookieName     = "ews_board"
)

// Sticky keeps a user on one board for the whole session: by the board named
// in the request's cookie (Request.Sticky), or by rendezvous hashing of the
// client address (source-ip), which unrelated board changes do not move.
// When that board is down or full the request falls back to Next.
type Sticky struct {
	Mode string // StickyCookie or StickySourceIP
	Next Policy
}

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
				return rendezvous(pool, addrKey(req))
			}
		}
	}
	return s.Next.Select(pool, req)
}

// Observe passes reports on to Next.
func (s *Sticky) Observe(b *Board, now time.Time) { observe(s.Next, b, now) }

// OneQueue is Next's.
func (s *Sticky) OneQueue() bool { return oneQueue(s.Next) }

func observe(p Policy, b *Board, now time.Time) {
	if o, ok := p.(Observer); ok {
		o.Observe(b, now)
	}
}

func oneQueue(p Policy) bool {
	o, ok := p.(OneQueue)
	return ok && o.OneQueue()
}
