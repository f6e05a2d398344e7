package dispatch

import (
	"context"
	"net/http"
)

// fromBoardKey marks a request whose mark says a board sent it.
type fromBoardKey struct{}

// withFromBoard marks r as sent by a board.
func withFromBoard(r *http.Request) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), fromBoardKey{}, true))
}

// FromBoard reports whether the front door accepted r with a board's
// proof: a dispatch mark (the master forwarded it) or a via mark (a
// follower passed it on), each verified under the cluster key and, with
// TLS, on a connection with a board's certificate. A redirect mark does
// not count: a client carries it. The credential check asks it
// (docs/NOTES.md "Security": the board credential counts only from a
// board).
func FromBoard(r *http.Request) bool {
	v, _ := r.Context().Value(fromBoardKey{}).(bool)
	return v
}
