package auth

import (
	"net/http"
	"strings"
)

// User names who sent r, for CGI programs (REMOTE_USER): the basic user
// of an Authorization header, "token" for the bearer token, "session" for
// the session cookie, "" with auth = "none" or no credentials. It does not
// check the credentials: call it behind Require.
func (a *Auth) User(r *http.Request) string {
	if a.mode == ModeNone {
		return ""
	}
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, _, _ := strings.Cut(h, " ")
		switch {
		case strings.EqualFold(scheme, "Bearer"):
			return "token"
		case strings.EqualFold(scheme, "Basic"):
			if u, _, ok := r.BasicAuth(); ok {
				return u
			}
		}
		return ""
	}
	if c, err := r.Cookie(CookieName); err == nil && c.Value != "" {
		return "session"
	}
	return ""
}
