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
	ok := subtle.ConstantTimeCompare(sum[:], a.token[:])
	if a.hasBoard {
		ok |= subtle.ConstantTimeCompare(sum[:], a.boardTok[:])
	}
	return ok == 1
}

// BoardMode reports whether the token is a board credential (a cluster)
// rather than the admin's (a board alone).
func (a *Auth) BoardMode() bool { return a.fromBoard != nil }
