package dispatch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
)

// authLogEvery bounds the log of one board's refusals: one line per board
// per this interval, with the count since the last line.
const authLogEvery = 10 * time.Second

// authLog rate-limits the refusal log per board.
type authLog struct {
	mu   sync.Mutex
	last map[string]time.Time
	n    map[string]int
}

// due counts one refusal by board and reports whether to log it now, with
// the refusals since the last line.
func (l *authLog) due(board string, now time.Time) (bool, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.last == nil {
		l.last, l.n = map[string]time.Time{}, map[string]int{}
	}
	l.n[board]++
	if t, ok := l.last[board]; ok && now.Sub(t) < authLogEvery {
		return false, 0
	}
	n := l.n[board]
	l.last[board], l.n[board] = now, 0
	return true, n
}

// authRefused turns a board's 401 to a dispatched request into a 502 that
// says why, when this board accepted the request's credentials
// (Options.Verified) and the board's really differ (Options.CredsDiffer). The master checked the client's credentials before the queue
// (the gate), so the board refusing them means its credentials differ from
// the master's: a setup fault, not the client's, and passing the 401 on
// would send the UI back to its login for nothing.
func (f *Front) authRefused(resp *http.Response, st *fwd) error {
	if st == nil || st.header != HeaderMark || resp.StatusCode != http.StatusUnauthorized {
		return nil
	}
	if (f.out.verified != nil && !f.out.verified(resp.Request)) || (f.out.credsDiffer != nil && !f.out.credsDiffer(st.target)) {
		// this board did not vouch for the credentials, or the board holds
		// the same ones: the 401 is about the client's, pass it on
		return nil
	}
	f.m.authRefused.WithLabelValues(st.target).Inc()
	if f.out.onAuthRefused != nil {
		f.out.onAuthRefused(st.target)
	}
	if ok, n := f.out.authLog.due(st.target, time.Now()); ok {
		f.log.Error("dispatch: board refused credentials the master accepted: its token or users differ from the master's; install the same cluster bundle on every board (ews cluster join)",
			"board", st.target, "addr", st.addr, "method", resp.Request.Method, "path", resp.Request.URL.Path, "refused", n)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	resp.Body.Close()
	body, _ := json.Marshal(httpx.ErrorBody{Error: fmt.Sprintf(
		"dispatch: board %s refused the credentials this master accepted: its credentials differ from the master's (install the same cluster bundle on every board)", st.target)})
	body = append(body, '\n')
	resp.StatusCode, resp.Status = http.StatusBadGateway, "502 Bad Gateway"
	resp.Header = http.Header{"Content-Type": {"application/json"}, "Content-Length": {strconv.Itoa(len(body))}}
	resp.Body, resp.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
	resp.TransferEncoding = nil
	return nil
}
