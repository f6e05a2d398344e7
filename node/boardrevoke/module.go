package boardrevoke

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/ews-firmware/ews/internal/clustertls"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/state"
)

// Path is where `ews cluster revoke` adds a board to the list (POST,
// admin only) and where the list is read (GET).
const Path = "/api/cluster/revoke"

// Request is the body of POST Path. In a cluster with an admin key (the
// bundles' verify_key), At and Sig are the admin bundle's signature of the
// revocation (Sign): a board's credential or a web session cannot revoke.
type Request struct {
	Name string    `json:"name"`
	At   time.Time `json:"at,omitzero"`
	Sig  []byte    `json:"sig,omitempty"`
}

// Options are what the module needs from the board: narrow hooks, never
// the board itself.
type Options struct {
	State  durable.State
	Logger *slog.Logger
	// Peers are the cluster's boards in rank order (cluster.peers).
	Peers []string
	// Verify is the admin's public key (the bundles' verify_key); nil: a
	// cluster without one, whose revocations are unsigned.
	Verify ed25519.PublicKey
	// Server and Client are the board's TLS configs (nil without TLS):
	// their handshakes refuse a revoked board's certificate.
	Server, Client *tls.Config
	// Gossip refuses a revoked board's gossip (state.Cluster.SetRevoked).
	Gossip interface{ SetRevoked(func(string) bool) }
	// Admin gates the POST (credentials, admin only, audited); Read the
	// GET (read_auth). Who names the acting person of a request Admin let
	// through.
	Admin, Read func(http.Handler) http.Handler
	Who         func(*http.Request) string
	// BoardAddr is where board's HTTPS listener is (host:port or a URL), for
	// the record of its certificate; false when not known.
	BoardAddr func(board string) (string, bool)
}

// Module is the list with what a board does with it (issue 46's module
// shape): it refuses the boards on it (TLS handshakes, gossip, connections
// opened before) and serves Path. Open builds it before the log runs.
type Module struct {
	*List
	o Options
}

// Open reads the list from the log and makes the board refuse every board
// on it; call before the log runs (transports and the listener take the
// TLS configs at each handshake).
func Open(o Options) *Module {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	l := New(o.State, o.Logger)
	m := &Module{List: l, o: o}
	// every board checks each version of the list before it takes it
	// (docs/DESIGN.md, Trust): never shorter, never a majority, each new
	// entry signed by the admin's key when the cluster has one
	l.state.Guard(durable.KindRevocations, Guard(o.Verify, o.Peers))
	if o.Server != nil {
		clustertls.RefuseBoards(o.Server, l.Revoked)
	}
	if o.Client != nil {
		clustertls.RefuseBoards(o.Client, l.Revoked)
	}
	if o.Gossip != nil {
		o.Gossip.SetRevoked(l.Revoked)
	}
	l.OnChange(func() {
		for _, e := range l.Entries() {
			o.Logger.Warn("cluster: board revoked: its certificate and gossip are refused", "board", e.Board, "by", e.By, "at", e.At)
		}
	})
	return m
}

// Routes mounts Path: adding to the list is the admin's, reading it is
// under read_auth.
func (m *Module) Routes(mux *http.ServeMux) {
	mux.Handle("POST "+Path, m.o.Admin(http.HandlerFunc(m.serveRevoke)))
	mux.Handle("GET "+Path, m.o.Read(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		httpx.JSON(w, http.StatusOK, Doc{Boards: m.Entries()})
	})))
}

// Refuse answers 403 and true when r comes from a revoked board's
// certificate: a connection it opened before the revocation, which the
// handshake's refusal no longer sees; the connection is closed after.
func (m *Module) Refuse(w http.ResponseWriter, r *http.Request) bool {
	name, ok := clustertls.PeerName(r.TLS)
	if !ok || !m.Revoked(name) {
		return false
	}
	w.Header().Set("Connection", "close")
	httpx.Error(w, http.StatusForbidden, "boardrevoke: board %q is revoked (ews cluster revoke)", name)
	return true
}

// Mark is v with the revoked boards' rows marked revoked.
func (m *Module) Mark(v state.View) state.View { return state.MarkRevoked(v, m.Revoked) }

// serveRevoke commits the board named in the body to the list; 503 "no
// quorum" on a side without a majority of the voters.
func (m *Module) serveRevoke(w http.ResponseWriter, r *http.Request) {
	var req Request
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&req); err != nil || req.Name == "" {
		httpx.Error(w, http.StatusBadRequest, "boardrevoke: want {\"name\": \"BOARD\"}")
		return
	}
	if !slices.Contains(m.o.Peers, req.Name) {
		httpx.Error(w, http.StatusNotFound, "boardrevoke: %q is not a board of this cluster (cluster.peers)", req.Name)
		return
	}
	e := Entry{Board: req.Name, By: m.o.Who(r), At: time.Now().UTC()}
	if m.o.Verify != nil {
		e.At, e.Sig = req.At.UTC(), req.Sig
		if !VerifyEntry(m.o.Verify, e) {
			httpx.Error(w, http.StatusForbidden, "boardrevoke: a revocation must be signed by the admin bundle's key: use `ews cluster revoke %s --bundle ADMIN`", req.Name)
			return
		}
	}
	if !m.Revoked(req.Name) {
		revoked := []string{req.Name}
		for _, old := range m.Entries() {
			revoked = append(revoked, old.Board)
		}
		if err := Majority(revoked, m.o.Peers); err != nil {
			httpx.Error(w, http.StatusConflict, "%v", err)
			return
		}
	}
	e.Serial, e.Fingerprint = m.certificate(r.Context(), req.Name)
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	got, err := m.Add(ctx, e)
	switch {
	case err == nil:
		m.o.Logger.Warn("cluster: board revoked", "board", got.Board, "by", got.By, "serial", got.Serial)
		httpx.JSON(w, http.StatusOK, got)
	default:
		durable.Answer(w, err)
	}
}

// certificate is the serial and SHA-256 fingerprint of the certificate
// board presents on its HTTPS listener, for the list's record; "" when TLS
// is off or the board does not answer within 2 s (its name is what is
// refused either way).
func (m *Module) certificate(ctx context.Context, board string) (serial, fingerprint string) {
	if m.o.Client == nil || m.o.BoardAddr == nil {
		return "", ""
	}
	addr, ok := m.o.BoardAddr(board)
	if !ok {
		return "", ""
	}
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		addr = u.Host
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	d := tls.Dialer{NetDialer: &net.Dialer{}, Config: m.o.Client.Clone()}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		m.o.Logger.Debug("boardrevoke: the board's certificate, for the record: not read", "board", board, "err", err)
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
