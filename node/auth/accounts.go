package auth

import "net/http"

// Accounts (docs/NOTES.md, Users, roles and audit) as auth asks them: the
// users store of node/users, behind an interface so this package stays a
// credential checker. A board alone's own token passes as itself (its
// verdict is nil: the root admin), the board credential from a board as
// Board (board.go); any other bearer token, a user's password at login,
// and a session cookie made by such a login are looked up here.
type Users interface {
	// Token returns the verdict for a user's token, and the user's name
	// and credential generation for a session made with it.
	Token(tok string) (who any, name string, gen uint64, ok bool)
	// Password checks a user's password (slow: a KDF run).
	Password(name, pw string) (who any, gen uint64, ok bool)
	// Session returns the verdict for a session of user name made at gen;
	// false once the user is gone or its credentials changed since.
	Session(name string, gen uint64) (who any, ok bool)
}

// acctHooks are the accounts' hooks of an Auth (Options.Users and
// Options.SessionInfo); zero without accounts.
type acctHooks struct {
	users Users
	info  func(who any, ok bool) map[string]any
}

// whoKey holds the verdict of the check in the request context.
type whoKey struct{}

// Who is the verdict of r's credential check on this board: what
// Users returned, Board for the board credential, or nil for a board
// alone's token (or no check yet).
func Who(r *http.Request) any { return r.Context().Value(whoKey{}) }

// Checked reports whether this Auth accepted r's credentials on this board
// (false with auth = "none": nothing was checked).
func (a *Auth) Checked(r *http.Request) bool {
	return a.mode != ModeNone && r.Context().Value(verifiedKey{}) == a
}
