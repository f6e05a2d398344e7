package node

import (
	"net/http"

	"github.com/ews-firmware/ews/node/dispatch"
)

// A card gives one board (docs/NOTES.md "Security"): on a board of a
// cluster the token of [http] and the board credential derived here are
// what a board shows for its own requests (the automation's device
// actions, forwarded by the master), accepted only from a board
// (sentByBoard); people's credentials come from the users store. The first
// admin is user admin, whose token the admin bundle holds and the board
// bundle only as a hash (adminSeed), seeded into the store once.

// sentByBoard reports whether a board sent r: the automation's request in
// process, or one the front door accepted with a dispatch or via mark
// (dispatch.FromBoard; with TLS, on a board certificate's connection).
func (n *Node) sentByBoard(r *http.Request) bool {
	return inProcess(r) || dispatch.FromBoard(r)
}

// inProcess reports whether r is the automation's own, sent in process
// (actorDoor).
func inProcess(r *http.Request) bool { return r.Context().Value(inProcessKey{}) != nil }

// fromBoardIf is auth's Options.FromBoard: nil on a board alone, whose
// token stays its admin (nothing to steal beyond that board).
func (n *Node) fromBoardIf() func(*http.Request) bool {
	if !n.boot.BoardMode() {
		return nil
	}
	return n.sentByBoard
}
