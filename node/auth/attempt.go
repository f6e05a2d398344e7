package auth

import (
	"context"
	"errors"
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
	if user != "" { // a basic password: a hash run, admitted first
		wait, err = a.costly(r.Context(), client, user, func() (err error) { ambient, who, err = a.check(r); return err })
		return ambient, who, wait, err
	}
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

// errBusy: too many password checks at once (hashGate); errLeft: the
// client left before its check ran.
var (
	errBusy = errors.New("auth: too many password checks at once")
	errLeft = errors.New("auth: client left before its password was checked")
)

// costly runs check, a password check of user from client that costs a
// KDF run, as docs/NOTES.md "Logins under flood" says: the failure is
// counted before the hash (refunded when right), the check admitted by the
// hashGate (errBusy with wait when not) and dropped when its client leaves
// while it waits (errLeft).
func (a *Auth) costly(ctx context.Context, client netip.Addr, user string, check func() error) (wait time.Duration, err error) {
	refund, wait := a.limit.take(client, user)
	if wait > 0 {
		return wait, errBadCredentials
	}
	release, wait, ok := a.hashes.enter(ctx, client)
	if !ok {
		if wait > 0 {
			refund() // not checked: not a failure
			return wait, errBusy
		}
		return 0, errLeft
	}
	err = check()
	release()
	if err == nil {
		refund()
		return 0, nil
	}
	if err == errBadCredentials && a.onFail != nil {
		a.onFail(Failure{Client: client, User: user})
	}
	return 0, err
}

// answered writes the answer of an attempt that cannot go on for its
// limit: 429 when blocked or busy, 503 when its client left; false when
// none was written.
func answered(w http.ResponseWriter, wait time.Duration, err error) bool {
	switch {
	case errors.Is(err, errBusy):
		httpx.SetRetryAfter(w, wait)
		httpx.Error(w, http.StatusTooManyRequests, "%v; retry in %v", err, wait.Round(time.Second))
	case errors.Is(err, errLeft):
		httpx.Error(w, http.StatusServiceUnavailable, "%v", err)
	case wait > 0:
		tooMany(w, wait)
	default:
		return false
	}
	return true
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
