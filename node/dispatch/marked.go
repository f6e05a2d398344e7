package dispatch

import (
	"errors"
	"net/http"

	"github.com/ews-firmware/ews/internal/httpx"
)

// The marked path: a request the master sent to this board, with a mark
// for it that accept verified and used up. It runs here (runLocal), after
// the credential check, and is never queued or forwarded again.

// acceptMarked takes a request with a valid mark mk: one signed by a
// master of an older epoch is answered 503 (a master that has stepped
// down; not forged, so no 403: the client retries and reaches the new
// master). It returns r with the mark's client as the request's client
// and, for a redirect mark, without the mark in its query.
func (f *Front) acceptMarked(w http.ResponseWriter, r *http.Request, mk Mark) (*http.Request, bool) {
	if epoch := f.c.Epoch(); mk.Epoch < epoch {
		f.m.refused.WithLabelValues(RefuseStale).Inc()
		unavailable(w, f.cfg.retry, "dispatch: request sent by the master of epoch %d, now epoch %d", mk.Epoch, epoch)
		return nil, false
	}
	if mk.Kind == KindRedirect { // redirect mode: the mark came in the query
		r2 := *r
		u := *r.URL
		u.RawQuery = stripQueryMark(u.RawQuery)
		r2.URL = &u
		r2.RequestURI = u.RequestURI()
		r = &r2
		if tok, ok := queryParam(u.RawQuery, QueryAssign); ok && f.clients.ttl > 0 {
			// the master's assignment of this client, covered by the mark
			r = withoutQueryParam(r, QueryAssign)
			f.keepAssignment(w, tok)
		}
	}
	return httpx.WithClient(r, mk.Client), true
}

// refuse answers a bad mark with 403.
func (f *Front) refuse(w http.ResponseWriter, err error) {
	reason := RefuseMalformed
	var me *MarkError
	if errors.As(err, &me) {
		reason = me.Reason
	}
	f.m.refused.WithLabelValues(reason).Inc()
	if reason == RefuseExpired {
		// signed by the master (the signature is checked first) but delayed
		// past its TTL on the way (a slow link, a paused board): not forged,
		// so no 403; it did not run and may be sent again
		unavailable(w, f.cfg.retry, "dispatch: dispatch mark expired on the way; the request did not run, send it again")
		return
	}
	w.Header().Set(HeaderRefused, reason)
	writeJSON(w, http.StatusForbidden, errorBody{Error: "dispatch: dispatch mark refused: " + reason, Reason: reason})
}
