package auth

import (
	"crypto/sha256"
	"crypto/subtle"
)

// The board credential (docs/NOTES.md "Security"): on a board of a
// cluster the token of [http] (a board bundle of an earlier build carries
// one) and the credential derived from the cluster key are what a board
// shows another for its own requests, the automation's device actions
// that the master forwards. They count only on a request that a board
// sent, which the board proves with its certificate or a mark
// (Options.FromBoard); from anyone else they are no credential, so the
// token found on a card opens no API. People log in as users of the users
// store; the first admin's token is the admin bundle's.

// BoardCredential is the type of Board.
type BoardCredential struct{}

// Board is the verdict for the board credential sent by a board.
var Board = &BoardCredential{}

// boardCredential reports whether tok is this board's token or its
// further board credential; constant time.
func (a *Auth) boardCredential(tok string) bool {
	sum := sha256.Sum256([]byte(tok))
	cs := a.creds.Load()
	ok := subtle.ConstantTimeCompare(sum[:], cs.token[:])
	for _, b := range cs.board {
		ok |= subtle.ConstantTimeCompare(sum[:], b[:])
	}
	return ok == 1
}

// Rotate installs the credentials of a rotation of the cluster's secrets
// (node/rotate; docs/NOTES.md "Security"): board[0] is the board
// credential now derived from the gossip key and board[1:] those still
// accepted (the previous one, while the rotation rolls); session[0] is
// the session secret cookies are signed with from now on and session[1:]
// those still accepted, pairwise with board. A cookie signed under a
// secret no longer given is refused: a rotation ends the sessions made
// before it, which is what it is for.
func (a *Auth) Rotate(board []string, session [][]byte) {
	old := a.creds.Load()
	cs := &credSet{token: old.token, secret: old.secret}
	for _, t := range board {
		cs.board = append(cs.board, sha256.Sum256([]byte(t)))
	}
	secretOf := func(int) string { return old.secret }
	if a.derived && len(board) > 0 { // the token was the derived credential: it rolls too
		cs.token, cs.secret = sha256.Sum256([]byte(board[0])), "token\x00"+board[0]
		secretOf = func(i int) string {
			if i < len(board) {
				return "token\x00" + board[i]
			}
			return cs.secret
		}
	}
	a.creds.Store(cs)
	var keys [][]byte
	for i, s := range session {
		keys = append(keys, sessionKey(s, secretOf(i)))
	}
	if len(keys) > 0 {
		a.sessions.setKeys(keys[0], keys[1:])
	}
}

// BoardMode reports whether the token is a board credential (a cluster)
// rather than the admin's (a board alone).
func (a *Auth) BoardMode() bool { return a.fromBoard != nil }
