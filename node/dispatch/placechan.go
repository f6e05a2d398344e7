package dispatch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/ews-firmware/ews/node/dispatch/place"
	"github.com/ews-firmware/ews/sched"
)

// The placement channel over HTTP: the upgrade on either end, with the
// board checks and marks the front door owns. The protocol itself (frames,
// both ends, leases) is package place.
const (
	// PlacePath is where a follower opens the channel (GET with
	// Connection: Upgrade, Upgrade: PlaceProtocol and a peer mark).
	PlacePath = place.Path
	// PlaceProtocol names the channel's protocol and version in Upgrade.
	PlaceProtocol = place.Protocol
	// HeaderPlaceBoard names the follower on its channel's upgrade (with
	// TLS its certificate names it instead).
	HeaderPlaceBoard = "X-Ews-Board"
)

// isPlaceChannel reports whether r opens a placement channel: a
// follower's own request to this board. One that carries a dispatch or via
// mark was passed on by a master of an older build, which does not know
// the channel and forwarded it as work: it takes the marked path (and its
// 404 tells the follower to send whole requests), never the channel, whose
// peer mark names that master, not this board.
func isPlaceChannel(r *http.Request) bool {
	return r.URL.Path == PlacePath && r.Header.Get("Upgrade") != "" &&
		r.Header.Get(HeaderMark) == "" && r.Header.Get(HeaderVia) == ""
}

// servePlace upgrades a follower's request to the placement channel and
// serves it (place.Serve) until it closes. Only a board may open one: with
// TLS its certificate (Options.PeerName), always a peer mark for this
// board.
func (f *Front) servePlace(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet || !strings.EqualFold(r.Header.Get("Upgrade"), PlaceProtocol) {
		writeJSON(w, http.StatusBadRequest, errorBody{Error: "dispatch: the placement channel takes GET with Upgrade: " + PlaceProtocol})
		return
	}
	if f.cfg.peerName != nil {
		if _, ok := f.cfg.peerName(r); !ok {
			f.m.refused.WithLabelValues(RefuseNotPeer).Inc()
			writeJSON(w, http.StatusForbidden, errorBody{Error: "dispatch: placement channel refused: not a cluster board", Reason: RefuseNotPeer})
			return
		}
	}
	if err := f.marks.VerifyPeer(r, f.c.Self()); err != nil {
		f.refuse(w, err)
		return
	}
	nc, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, errorBody{Error: "dispatch: placement channel: " + err.Error()})
		return
	}
	defer nc.Close()
	_ = nc.SetDeadline(time.Time{}) // the server's deadlines were for one request
	_, _ = brw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: " + PlaceProtocol + "\r\n" + place.HeaderRan + ": 1\r\n\r\n")
	if err := brw.Flush(); err != nil {
		return
	}
	board := r.Header.Get(HeaderPlaceBoard)
	if f.cfg.peerName != nil {
		board, _ = f.cfg.peerName(r) // its certificate names it
	}
	f.placing.chans.Add(nc)
	defer f.placing.chans.Remove(nc)
	handsOn := r.Header.Get(place.HeaderHandOn) == "1"
	err = place.Serve(context.WithoutCancel(r.Context()), nc, brw.Reader, board, handsOn, placeQueue{f}, f.placing.pm.served.Inc)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		f.log.Debug("dispatch: placement channel closed", "peer", r.RemoteAddr, "err", err)
	}
}

// placeQueue is the master's queue as its channels see it.
type placeQueue struct{ f *Front }

func (q placeQueue) Dispatcher() *sched.Dispatcher {
	if d := q.f.master.disp.Load(); d != nil && q.f.c.IsMaster() {
		return d
	}
	return nil
}

func (q placeQueue) Epoch() uint64 { return q.f.c.Epoch() }

// dialPlace opens a channel to master to (place.Follower.Dial) over this board's own
// connections to boards (conntransport.go), signed with a peer mark. off
// is how long not to try again after an error.
func (f *Front) dialPlace(to place.Master) (nc net.Conn, ran bool, off time.Duration, err error) {
	ct, ok := f.out.tr.(*connTransport)
	if !ok {
		return nil, false, place.OffOld, errors.New("dispatch: the transport cannot open a placement channel")
	}
	ctx, cancel := context.WithTimeout(context.Background(), place.DialTimeout)
	defer cancel()
	scheme := f.cfg.scheme
	bc, err := ct.dial(ctx, connKey{scheme: scheme, addr: hostPort(scheme, to.Addr)}) // never pooled: the channel keeps it
	if err != nil {
		return nil, false, place.OffError, err
	}
	req, err := http.NewRequest(http.MethodGet, scheme+"://"+to.Addr+PlacePath, nil)
	if err != nil {
		bc.nc.Close()
		return nil, false, place.OffError, err
	}
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", PlaceProtocol)
	req.Header.Set(HeaderPlaceBoard, f.c.Self())
	req.Header.Set(place.HeaderHandOn, "1") // place.Chan.FreeLease
	f.marks.SignPeer(req, to.Name)
	_ = bc.nc.SetDeadline(time.Now().Add(place.DialTimeout))
	stop := context.AfterFunc(ctx, bc.expire)
	defer stop()
	if err := req.Write(bc.bw); err != nil {
		bc.nc.Close()
		return nil, false, place.OffError, err
	}
	if err := bc.bw.Flush(); err != nil {
		bc.nc.Close()
		return nil, false, place.OffError, err
	}
	bc.head.left = maxAnswerHead
	resp, err := http.ReadResponse(bc.br, req)
	if err != nil {
		bc.nc.Close()
		return nil, false, place.OffError, err
	}
	bc.head.left = -1
	if resp.StatusCode != http.StatusSwitchingProtocols || !strings.EqualFold(resp.Header.Get("Upgrade"), PlaceProtocol) {
		resp.Body.Close()
		bc.nc.Close()
		return nil, false, place.OffOld, fmt.Errorf("dispatch: the master answered the placement channel %d (an older build, or refused)", resp.StatusCode)
	}
	if bc.br.Buffered() > 0 { // the master speaks only when asked
		bc.nc.Close()
		return nil, false, place.OffError, errors.New("dispatch: the master spoke on the placement channel before it was asked")
	}
	_ = bc.nc.SetDeadline(time.Time{})
	return bc.nc, resp.Header.Get(place.HeaderRan) == "1", 0, nil
}
