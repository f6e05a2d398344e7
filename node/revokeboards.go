package node

// Revoked boards (docs/NOTES.md "Revoking a board"): the list in the
// durable log, what refuses them here, and `ews cluster revoke`'s route.
// Hooks elsewhere: n.openRevokedBoards() (system.go), n.revokeRoutes(mux)
// (routes.go), the view's runstate (cluster.go).

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/boardrevoke"
	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/state"
)

// RevokePath is where `ews cluster revoke` adds a board to the list
// (POST, admin only) and where the list is read (GET).
const RevokePath = "/api/cluster/revoke"

// openRevokedBoards reads the list from the log (after openAccounts, which
// opens the log) and makes this board refuse every board on it: TLS
// handshakes with its certificate, either way, and its gossip. Transports
// and the listener take the TLS configs at each handshake, and none has
// run yet.
func (n *Node) openRevokedBoards() {
	l := boardrevoke.New(n.acc.durable.state, n.log)
	n.acc.boards = l
	// every board checks each version of the list before it takes it
	// (docs/DESIGN.md, Trust): never shorter, never a majority, each new
	// entry signed by the admin's key when the cluster has one
	n.acc.durable.state.Guard(durable.KindRevocations, boardrevoke.Guard(n.sec.verify, n.peerNames()))
	if n.sec.on() {
		clustertls.RefuseBoards(n.sec.server, l.Revoked)
		clustertls.RefuseBoards(n.sec.client, l.Revoked)
	}
	n.clu.cluster.SetRevoked(l.Revoked)
	l.OnChange(func() {
		for _, e := range l.Entries() {
			n.log.Warn("cluster: board revoked: its certificate and gossip are refused", "board", e.Board, "by", e.By, "at", e.At)
		}
	})
}

// refusedBoard answers 403 and true when r comes from a revoked board's
// certificate: a connection it opened before the revocation, which the
// handshake's refusal no longer sees; the connection is closed after.
func (n *Node) refusedBoard(w http.ResponseWriter, r *http.Request) bool {
	name, ok := peerName(r)
	if !ok || !n.acc.boards.Revoked(name) {
		return false
	}
	w.Header().Set("Connection", "close")
	httpx.Error(w, http.StatusForbidden, "boardrevoke: board %q is revoked (ews cluster revoke)", name)
	return true
}

// markRevoked is v with the revoked boards' rows marked revoked.
func (n *Node) markRevoked(v state.View) state.View {
	return state.MarkRevoked(v, n.acc.boards.Revoked)
}

// revokeRoutes mounts the list: adding to it is the admin's, reading it
// is under read_auth.
func (n *Node) revokeRoutes(mux *http.ServeMux) {
	mux.Handle("POST "+RevokePath, n.audited(n.acc.auth.Require(adminOnly(http.HandlerFunc(n.serveRevoke)))))
	mux.Handle("GET "+RevokePath, n.readAuth(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		httpx.JSON(w, http.StatusOK, boardrevoke.Doc{Boards: n.acc.boards.Entries()})
	})))
}

// RevokeRequest is the body of POST /api/cluster/revoke. In a cluster
// with an admin key (the bundles' verify_key), At and Sig are the admin
// bundle's signature of the revocation (boardrevoke.Sign): a board's
// credential or a web session cannot revoke.
type RevokeRequest struct {
	Name string    `json:"name"`
	At   time.Time `json:"at,omitzero"`
	Sig  []byte    `json:"sig,omitempty"`
}

// peerNames are the cluster's boards, in rank order.
func (n *Node) peerNames() []string {
	out := make([]string, 0, len(n.boot.state.Peers))
	for _, p := range n.boot.state.Peers {
		out = append(out, p.Name)
	}
	return out
}

// serveRevoke commits the board named in the body to the list; 503 "no
// quorum" on a side without a majority of the voters.
func (n *Node) serveRevoke(w http.ResponseWriter, r *http.Request) {
	var req RevokeRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&req); err != nil || req.Name == "" {
		httpx.Error(w, http.StatusBadRequest, "boardrevoke: want {\"name\": \"BOARD\"}")
		return
	}
	known := false
	for _, p := range n.boot.state.Peers {
		known = known || p.Name == req.Name
	}
	if !known {
		httpx.Error(w, http.StatusNotFound, "boardrevoke: %q is not a board of this cluster (cluster.peers)", req.Name)
		return
	}
	e := boardrevoke.Entry{Board: req.Name, By: who(r).Name, At: time.Now().UTC()}
	if n.sec.verify != nil {
		e.At, e.Sig = req.At.UTC(), req.Sig
		if !boardrevoke.VerifyEntry(n.sec.verify, e) {
			httpx.Error(w, http.StatusForbidden, "boardrevoke: a revocation must be signed by the admin bundle's key: use `ews cluster revoke %s --bundle ADMIN`", req.Name)
			return
		}
	}
	if !n.acc.boards.Revoked(req.Name) {
		revoked := []string{req.Name}
		for _, old := range n.acc.boards.Entries() {
			revoked = append(revoked, old.Board)
		}
		if err := boardrevoke.Majority(revoked, n.peerNames()); err != nil {
			httpx.Error(w, http.StatusConflict, "%v", err)
			return
		}
	}
	e.Serial, e.Fingerprint = n.boardCertificate(r.Context(), req.Name)
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	got, err := n.acc.boards.Add(ctx, e)
	switch {
	case err == nil:
		n.log.Warn("cluster: board revoked", "board", got.Board, "by", got.By, "serial", got.Serial)
		httpx.JSON(w, http.StatusOK, got)
	case durable.IsNoQuorum(err), errors.Is(err, durable.ErrNoLeader), errors.Is(err, context.DeadlineExceeded):
		httpx.Unavailable(w, time.Second, "%v", err)
	case durable.IsRefused(err):
		httpx.Error(w, http.StatusForbidden, "%v", err)
	default:
		httpx.Error(w, http.StatusInternalServerError, "%v", err)
	}
}

// boardCertificate is the serial and SHA-256 fingerprint of the
// certificate board presents on its HTTPS listener, for the list's record;
// "" when TLS is off or the board does not answer within 2 s (its name is
// what is refused either way).
func (n *Node) boardCertificate(ctx context.Context, board string) (serial, fingerprint string) {
	if !n.sec.on() {
		return "", ""
	}
	addr, ok := n.boardHTTP(board)
	if !ok {
		return "", ""
	}
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		addr = u.Host
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	d := tls.Dialer{NetDialer: &net.Dialer{}, Config: n.sec.client.Clone()}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		n.log.Debug("boardrevoke: the board's certificate, for the record: not read", "board", board, "err", err)
		return "", ""
	}
	defer c.Close()
	certs := c.(*tls.Conn).ConnectionState().PeerCertificates
	if len(certs) == 0 || certs[0].Subject.CommonName != board {
		return "", ""
	}
	sum := sha256.Sum256(certs[0].Raw)
	return certs[0].SerialNumber.Text(16), hex.EncodeToString(sum[:])
}
