package guard

import (
	"net/http"
	"strings"

	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/access"
	"github.com/ews-firmware/ews/node/audit"
	"github.com/ews-firmware/ews/node/auth"
)

// Gate is this board's credential check as the front door calls it, once
// per request (dispatch.Authenticator): control requests (CGI, and device
// API calls other than GET and HEAD) need credentials before they may enter
// the queue, so unauthenticated requests cannot fill it. The verdict rides
// in the request context (auth.Require), so the handler that runs the
// request on this board does not check again; a board the request is
// forwarded to checks it once itself. Failed checks count against the
// client a mark vouches for (the front door puts it in the context first).
// The gate only answers; it never calls back into the front door.
//
// With [http] read_auth the device API's reads (history included) need
// credentials here too, so a board's 401 to one the master forwarded means
// its credentials really differ (docs/NOTES.md "read_auth means read").
type Gate struct {
	Auth     *auth.Auth
	ReadAuth bool
	Audit    *audit.Log // refusals audited
}

// Authenticate checks r's credentials when it is a control request.
func (g Gate) Authenticate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	if !control(r) && !(g.ReadAuth && strings.HasPrefix(r.URL.Path, "/api/devices")) {
		return r, true
	}
	var out *http.Request
	g.Auth.Require(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { out = r })).ServeHTTP(w, r)
	if out == nil {
		return nil, false
	}
	if code, msg := access.Rights(out); code != 0 { // the user's role and device patterns
		access.Refused(g.Audit, out, code)
		httpx.Error(w, code, "%s", msg)
		return nil, false
	}
	return out, true
}

// control reports whether r needs credentials before the queue.
func control(r *http.Request) bool {
	p := r.URL.Path
	return strings.HasPrefix(p, "/cgi-bin/") || strings.HasPrefix(p, "/api/users") || (r.Method != http.MethodGet && r.Method != http.MethodHead && strings.HasPrefix(p, "/api/devices/"))
}
