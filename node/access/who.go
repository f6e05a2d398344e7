package access

import (
	"net/http"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/audit"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/users"
)

// HeaderActor labels an automation's act in the audit log ("rule:2",
// "mqtt"); only the automation's requests may carry it.
const HeaderActor = "X-Ews-Actor"

// InProcessKey marks a request the automation sends in process (Door):
// its HeaderActor is kept at the front door.
type InProcessKey struct{}

// actAsKey holds, in the context of a request the automation sends in
// process (never one from the network), the user whose rights it gets.
type actAsKey struct{}

// principal is the verdict of a check: a user; the board credential a
// board sent (its own requests: users.Board); else the admin of a board
// alone's token (also when no credentials were asked, e.g. auth = "none").
func principal(who any) *users.Principal {
	switch p := who.(type) {
	case *users.Principal:
		return p
	case *auth.BoardCredential:
		return users.Board()
	}
	return users.Root()
}

// automated reports whether p is the automation's own: the board
// credential, or a board alone's token.
func automated(p *users.Principal) bool { return p == users.Root() || p == users.Board() }

// Who is the principal of a checked request: the user its credentials
// name; for the automation's own requests (the board credential, sent in
// process by Door) the user they act as.
func Who(r *http.Request) *users.Principal {
	p := principal(auth.Who(r))
	if as, ok := r.Context().Value(actAsKey{}).(*users.Principal); ok && automated(p) {
		return as
	}
	return p
}

// KeyOwner names whose Idempotency-Keys a checked request uses: its user,
// or for the board credential the automation it labels itself as (a rule,
// an MQTT command). No user can use up another's key or a rule's.
func KeyOwner(r *http.Request) string {
	if automated(principal(auth.Who(r))) {
		if a := r.Header.Get(HeaderActor); a != "" && len(a) <= 64 {
			return "actor:" + a
		}
	}
	return "user:" + Who(r).Name
}

// Rights is the gate's second question after the credentials: may this
// user send this request (users.Rights)? 0 when yes.
func Rights(r *http.Request) (int, string) { return users.Rights(Who(r), r) }

// AdminOnly lets only an admin through to next (behind auth.Require),
// and tells the audit log who it was.
func AdminOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		audit.Seen(r)
		if p := Who(r); !p.Admin() {
			httpx.Error(w, http.StatusForbidden, "users: %s %q: admin only", p.Role, p.Name)
			return
		}
		next.ServeHTTP(w, r)
	})
}
