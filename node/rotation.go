package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync/atomic"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/node/rotate"
	"github.com/ews-firmware/ews/state/row"
)

// Rotating the cluster's secrets (docs/NOTES.md "Security"): `ews cluster
// rotate` commits a new gossip key and session secret to the durable log
// (POST RotatePath); node/rotate rolls them through every board (the
// keyring's install, use, remove) and keeps them under state_dir; a board
// that was down when it finished is offered them over HTTPS on its
// certificate (PushPath). Hooks elsewhere: n.openRotation() (system.go),
// n.rotateRoutes(mux) (routes.go), the roller run beside the log
// (durablestate.go), the board credential the automation sends
// (actorDoor).

// RotatePath is where `ews cluster rotate` starts a rotation (POST, admin
// only) and follows it (GET: its phase and the boards it waits for,
// never a secret).
const RotatePath = "/api/cluster/rotate"

// PushPath is where a board offers a rotation's sealed document to a
// board that missed it: boards' certificates only.
const PushPath = "/internal/rotate"

// RotateRequest is the body of POST RotatePath: the new gossip key and
// session secret (the CLI makes them and writes them into the admin
// bundle), and a check that the admin bundle is of this cluster.
type RotateRequest struct {
	Key     []byte `json:"key"`
	Session []byte `json:"session"`
	// StoreID is StoreID of the admin bundle's store secret.
	StoreID string `json:"store_id"`
	// Gen is the generation the rotation is for (GET RotatePath's gen +
	// 1), Sig the admin bundle's signature of it (rotate.Signed), which a
	// board whose bundle has a verify key requires.
	Gen uint64 `json:"gen"`
	Sig []byte `json:"sig,omitempty"`
}

// StoreID names a store secret without telling it: the admin's bundle and
// the cluster must have the same one.
func StoreID(store []byte) string {
	k, err := dispatch.DeriveKey(append([]byte("ews store id\x00"), store...))
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%x", k[:8])
}

// rotation is this board's part in the rotations; nil alone, insecure, or
// without a cluster key.
type rotation struct {
	roller    *rotate.Roller
	boardCred atomic.Pointer[string] // the board credential the automation sends now
	client    *http.Client           // pushes, with this board's certificate
}

// openRotation builds the roller once the marker and the credentials
// exist, and installs the secrets the board starts on.
func (n *Node) openRotation() {
	b := n.boot
	if len(b.rotated.Key) == 0 || n.acc.durable.raft == nil {
		return
	}
	rt := &rotation{}
	cred := b.boardCred
	rt.boardCred.Store(&cred)
	n.acc.rotation = rt
	o := rotate.Options{Self: b.state.Name, State: n.acc.durable.state, Saved: b.rotated, Path: b.secretsPath,
		Install: n.installSecrets, Live: n.liveBoards, Verify: n.sec.verify, Log: n.log}
	if kr := n.clu.cluster.Keyring(); kr != nil {
		o.Keyring = kr
	}
	if n.sec.on() { // a board that missed a rotation is reached on its certificate; without TLS it needs a new bundle
		tr := &http.Transport{TLSClientConfig: n.sec.client}
		rt.client = &http.Client{Timeout: 2 * time.Second, Transport: tr}
		n.life.onClose(tr.CloseIdleConnections)
		o.Missed, o.Push = n.missedBoards, n.pushSecrets
	}
	rt.roller = rotate.New(o)
}

// installSecrets makes primary the secrets of this board's marks, board
// credential and session cookies, also those it still accepts.
func (n *Node) installSecrets(primary rotate.Secrets, also []rotate.Secrets) {
	b := n.boot
	sign, err := dispatch.DeriveKey(primary.Key)
	if err != nil {
		n.log.Error("rotate: mark key", "err", err)
		return
	}
	var accept [][]byte
	creds := []string{boardCredential(b.state, primary.Key, b.auth)}
	sessions := [][]byte{primary.Session}
	for _, s := range also {
		if k, err := dispatch.DeriveKey(s.Key); err == nil {
			accept = append(accept, k)
		}
		creds = append(creds, boardCredential(b.state, s.Key, b.auth))
		sessions = append(sessions, s.Session)
	}
	if n.acc.marker != nil {
		if err := n.acc.marker.SetKeys(sign, accept...); err != nil {
			n.log.Error("rotate: mark keys", "err", err)
		}
	}
	if creds[0] == "" {
		creds = nil // no board credential here (auth is not token)
	}
	n.acc.auth.Rotate(creds, sessions)
	n.acc.creds.Store(n.acc.auth.Fingerprint(b.storeKey))
	if rt := n.acc.rotation; rt != nil && len(creds) > 0 {
		rt.boardCred.Store(&creds[0])
	}
}

// currentBoardCred is the board credential the automation sends now: a
// rotation replaces the one derived at start.
func (n *Node) currentBoardCred() string {
	if rt := n.acc.rotation; rt != nil {
		return *rt.boardCred.Load()
	}
	return n.boot.boardCred
}

// liveBoards names the boards alive on the gossip, revoked ones left out.
func (n *Node) liveBoards() []string {
	var out []string
	for _, b := range n.clu.cluster.Boards() {
		if b.Runstate != row.Down && !n.acc.boards.Revoked(b.Name) {
			out = append(out, b.Name)
		}
	}
	return out
}

// hearsOthers reports whether another board is alive on this board's gossip.
func (n *Node) hearsOthers() bool {
	for _, b := range n.liveBoards() {
		if b != n.boot.state.Name {
			return true
		}
	}
	return false
}

// missedBoards names the boards that are not alive and not revoked.
func (n *Node) missedBoards() []string {
	var out []string
	for _, b := range n.clu.cluster.Boards() {
		if b.Name != n.boot.state.Name && b.Runstate == row.Down && !n.acc.boards.Revoked(b.Name) {
			out = append(out, b.Name)
		}
	}
	return out
}

// pushSecrets offers sealed to board at the HTTP(S) address it last
// reported (a board that is down keeps its row's); its certificate
// proves it is the cluster's board, this board's proves the offer.
func (n *Node) pushSecrets(ctx context.Context, board string, sealed []byte) error {
	addr := ""
	for _, b := range n.clu.cluster.Boards() {
		if b.Name == board {
			addr = b.HTTP
		}
	}
	if addr == "" {
		return errors.New("rotate: its address was never heard")
	}
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		addr = u.Host
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+addr+PushPath, bytes.NewReader(sealed))
	if err != nil {
		return err
	}
	resp, err := n.acc.rotation.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("rotate: %s answered %s", board, resp.Status)
	}
	return nil
}

// rotateRoutes mounts the rotation's routes.
func (n *Node) rotateRoutes(mux *http.ServeMux) {
	mux.Handle("POST "+RotatePath, n.audited(n.acc.auth.Require(adminOnly(http.HandlerFunc(n.serveRotate)))))
	mux.Handle("GET "+RotatePath, n.acc.auth.Require(adminOnly(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		rt := n.acc.rotation
		if rt == nil {
			httpx.Error(w, http.StatusNotFound, "rotate: this board has no cluster secrets to rotate (alone, or insecure)")
			return
		}
		httpx.JSON(w, http.StatusOK, rt.roller.Status())
	}))))
	mux.HandleFunc("POST "+PushPath, n.serveRotatePush)
}

// serveRotate starts a rotation with the secrets in the body: 200 and its
// status once committed; 409 while one is rolling; 503 "no quorum" on a
// side without a majority of the voters.
func (n *Node) serveRotate(w http.ResponseWriter, r *http.Request) {
	rt := n.acc.rotation
	if rt == nil {
		httpx.Error(w, http.StatusBadRequest, "rotate: this board has no cluster secrets to rotate (alone, or insecure: no gossip key)")
		return
	}
	var req RotateRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 4096)).Decode(&req); err != nil {
		httpx.Error(w, http.StatusBadRequest, "rotate: want {\"key\", \"session\", \"store_id\"}: %v", err)
		return
	}
	if l := len(req.Key); l != 16 && l != 24 && l != 32 {
		httpx.Error(w, http.StatusBadRequest, "rotate: key: want 16, 24 or 32 bytes")
		return
	}
	if len(req.Session) < 32 {
		httpx.Error(w, http.StatusBadRequest, "rotate: session: want at least 32 bytes")
		return
	}
	if req.StoreID != StoreID(n.boot.storeKey) {
		httpx.Error(w, http.StatusConflict, "rotate: the admin bundle's store secret is not this cluster's (another cluster's bundle?)")
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	d, err := rt.roller.Start(ctx, rotate.Secrets{Key: req.Key, Session: req.Session}, who(r).Name, req.Gen, req.Sig)
	var re *rotate.RollingError
	var se *rotate.StaleError
	switch {
	case err == nil:
		n.log.Warn("cluster: secrets rotation started", "gen", d.Gen, "by", d.By)
		httpx.JSON(w, http.StatusOK, rt.roller.Status())
	case errors.Is(err, rotate.ErrUnsigned):
		httpx.Error(w, http.StatusForbidden, "%v", err)
	case errors.As(err, &re), errors.As(err, &se), errors.Is(err, rotate.ErrLastGeneration), durable.IsRefused(err):
		httpx.Error(w, http.StatusConflict, "%v", err)
	case durable.IsNoQuorum(err), errors.Is(err, durable.ErrNoLeader), errors.Is(err, context.DeadlineExceeded):
		httpx.Unavailable(w, time.Second, "%v", err)
	default:
		httpx.Error(w, http.StatusInternalServerError, "%v", err)
	}
}

// serveRotatePush takes a rotation another board offers: only on HTTPS,
// only from a board's certificate (revoked ones are refused at the
// handshake), only a later generation sealed under the store's secret and
// signed by the admin (rotate.Options.Verify; without a verify key, only
// while this board hears no other board).
func (n *Node) serveRotatePush(w http.ResponseWriter, r *http.Request) {
	from, ok := peerName(r)
	if !n.sec.on() || !ok {
		httpx.Error(w, http.StatusForbidden, "rotate: for the cluster's boards only, on their certificates")
		return
	}
	rt := n.acc.rotation
	if rt == nil {
		httpx.Error(w, http.StatusNotFound, "rotate: this board has no cluster secrets to rotate")
		return
	}
	if n.sec.verify == nil && n.hearsOthers() {
		// no admin's key to check the offer by (a version 2 bundle): in
		// the cluster, rotations come from the log only (a card's holder
		// could push secrets of its own making)
		httpx.Error(w, http.StatusConflict, "rotate: this board is in the cluster: it takes rotations from the durable log")
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		httpx.Error(w, http.StatusBadRequest, "rotate: %v", err)
		return
	}
	changed, err := rt.roller.Offer(body)
	switch {
	case errors.Is(err, rotate.ErrUnsigned):
		httpx.Error(w, http.StatusForbidden, "%v", err)
		return
	case err != nil:
		httpx.Error(w, http.StatusBadRequest, "%v", err)
		return
	}
	if changed {
		n.log.Warn("rotate: took the cluster's new secrets from a board (this one missed the rotation)", "from", from)
	}
	httpx.JSON(w, http.StatusOK, map[string]bool{"changed": changed})
}
