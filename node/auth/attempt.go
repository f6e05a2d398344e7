package auth

import (
	"net/http"
	"net/netip"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
)

// strongToken is the shortest bearer token counted as one nobody guesses
// (ews cluster init writes 43 characters): from a blocked address it is
// still checked, so the right one gets in behind a NAT an attacker shares.
const strongToken = 32

// Failure is one failed credential check as the boards tell each other
// (Options.OnFail, Auth.Failed), so the limit on guessing holds across
// the cluster and not per board.
type Failure struct {
	Client netip.Addr `json:"client"`
	User   string     `json:"user,omitempty"` // basic: the user name tried
}

// tried is who r's credentials claim to be for the limiter (a basic user
// name, else ""), and whether they are credentials nobody guesses: a
// session cookie (its MAC is 128 bits) or a strong token.
func (a *Auth) tried(r *http.Request) (user string, unguessable bool) {
	if h := r.Header.Get("Authorization"); h != "" {
		if u, _, ok := r.BasicAuth(); ok {
			return u, false
		}
		return "", a.strong
	}
	if c, err := r.Cookie(CookieName); err == nil && c.Value != "" {
		return "", true
	}
	return "", false
}

// attempt checks r's credentials under the limit on failures: a blocked
// address and user get wait > 0 (429) without a check, unless the
// credentials cannot be guessed; those are checked, and pass when right.
func (a *Auth) attempt(r *http.Request) (ambient bool, who any, wait time.Duration, err error) {
	client := httpx.Client(r)
	user, unguessable := a.tried(r)
	if wait = a.limit.blocked(client, user); wait > 0 && !unguessable {
		return false, nil, wait, errBadCredentials
	}
	ambient, who, err = a.check(r)
	if err == errBadCredentials {
		a.failed(client, user)
	}
	if err == nil {
		wait = 0
	}
	return ambient, who, wait, err
}

// failed counts a failure here and tells the other boards.
func (a *Auth) failed(c netip.Addr, user string) {
	a.limit.fail(c, user)
	if a.onFail != nil {
		a.onFail(Failure{Client: c, User: user})
	}
}

// Failed counts a failure another board saw (its OnFail), so a client
// that guesses on every board is slowed as on one.
func (a *Auth) Failed(f Failure) {
	if f.Client.IsValid() && len(f.User) <= 256 {
		a.limit.fail(f.Client.Unmap(), f.User)
	}
}
