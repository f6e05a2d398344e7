package mdns

import (
	"log/slog"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/net/ipv4"
)

// rescanEvery is how often the responder looks for interfaces that came
// up and addresses that changed (a board that boots before its network,
// a new DHCP lease), and announces again where they did.
const rescanEvery = 10 * time.Second

// links are the interfaces the responder joined the group on. scan is
// called by Run alone; serve reads the list through current.
type links struct {
	bind   netip.Addr
	joined []net.Interface
	seen   map[int]string // interface index -> its announced addresses, joined by " "
	cur    atomic.Pointer[[]net.Interface]
}

func newLinks(bind netip.Addr) *links {
	l := &links{bind: bind, seen: map[int]string{}}
	l.cur.Store(&[]net.Interface{})
	return l
}

// current is the list of joined interfaces, for the reader.
func (l *links) current() []net.Interface { return *l.cur.Load() }

// scan joins the group on the interfaces that came up since the last scan
// and reports whether any interface is new or has other addresses.
func (l *links) scan(p *ipv4.PacketConn, log *slog.Logger) (bool, error) {
	ifcs, err := multicastInterfaces(l.bind)
	if err != nil {
		return false, err
	}
	changed := false
	for _, ifc := range ifcs {
		key := addrKey(announced(ifc, l.bind))
		old, ok := l.seen[ifc.Index]
		switch {
		case !ok:
			if err := p.JoinGroup(&ifc, &net.UDPAddr{IP: groupV4.AsSlice()}); err != nil {
				log.Debug("mdns: join group", "interface", ifc.Name, "err", err)
				continue
			}
			l.joined = append(l.joined, ifc)
			changed = true
		case old != key:
			changed = true
		}
		l.seen[ifc.Index] = key
	}
	if changed {
		cp := slices.Clone(l.joined)
		l.cur.Store(&cp)
	}
	return changed, nil
}

func (l *links) names() []string {
	out := make([]string, len(l.joined))
	for i, ifc := range l.joined {
		out[i] = ifc.Name
	}
	return out
}

func addrKey(ips []netip.Addr) string {
	s := make([]string, len(ips))
	for i, ip := range ips {
		s[i] = ip.String()
	}
	slices.Sort(s)
	return strings.Join(s, " ")
}
