package node

import (
	"net/http"
	"strings"
)

// gate asks for credentials before a control request enters the queue, so
// unauthenticated requests cannot fill it. The verdict rides in the request
// context (auth.Require), so when the request runs on this board it is not
// checked twice; a board it is forwarded to checks it once itself, after
// its Front has verified (and used up) the mark, in the handler that runs
// it. Failed checks count against the client a mark vouches for.
func (n *Node) gate(next http.Handler) http.Handler {
	guarded := n.auth.Require(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.front.Marked(r) {
			next.ServeHTTP(w, r)
			return
		}
		r = n.front.ViaClient(r)
		p := r.URL.Path
		if strings.HasPrefix(p, "/cgi-bin/") || (r.Method != http.MethodGet && r.Method != http.MethodHead && strings.HasPrefix(p, "/api/devices/")) {
			guarded.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(w, r)
	})
}
