package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"sync"
	"time"

	"github.com/ews-firmware/ews/sched"
)

// fwd is one forwarding attempt, carried to the proxy's hooks in the
// request context.
type fwd struct {
	target string // board (or master) name
	addr   string // its host:port
	header string // HeaderMark or HeaderVia
	token  string
	start  time.Time // non-zero: observe the master's added latency
	err    error     // set by the error handler: nothing was written
}

type fwdKey struct{}

// errResent: the board refused a request the transport sent it twice.
var errResent = errors.New("dispatch: the board's connection died after it received the request, and it refused the transport's resend")

func (f *Front) newProxy() *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite:    f.rewrite,
		Transport:  f.tr,
		BufferPool: bufPool{},
		ErrorLog:   slog.NewLogLogger(f.log.Handler(), slog.LevelDebug),
		ModifyResponse: func(resp *http.Response) error {
			// The transport sends an idempotent request again by itself when
			// its connection died before an answer; the board had already
			// used the mark up, so it says "replayed". For the client the
			// board failed: 502 (or the GET retry on another board).
			if resp.StatusCode == http.StatusForbidden && resp.Header.Get(HeaderRefused) == RefuseReplayed {
				return errResent
			}
			return nil
		},
		ErrorHandler: func(_ http.ResponseWriter, r *http.Request, err error) {
			if st, ok := r.Context().Value(fwdKey{}).(*fwd); ok {
				st.err = err
			}
		},
	}
}

// rewrite aims the outbound request at the attempt's board and keeps the
// client's Host, X-Forwarded-For (appended), X-Forwarded-Host and -Proto.
func (f *Front) rewrite(pr *httputil.ProxyRequest) {
	st, _ := pr.In.Context().Value(fwdKey{}).(*fwd)
	if st == nil {
		return
	}
	pr.Out.URL.Scheme = f.scheme
	pr.Out.URL.Host = st.addr
	pr.Out.Host = pr.In.Host
	if v := pr.In.Header["X-Forwarded-For"]; len(v) > 0 {
		pr.Out.Header["X-Forwarded-For"] = v
	}
	pr.SetXForwarded()
	for _, k := range [...]string{"X-Forwarded-Host", "X-Forwarded-Proto"} {
		if v := pr.In.Header[k]; len(v) > 0 { // set by the first hop: the client's
			pr.Out.Header[k] = v
		}
	}
	delete(pr.Out.Header, HeaderMark)
	delete(pr.Out.Header, HeaderVia)
	pr.Out.Header[st.header] = []string{st.token}
	if !st.start.IsZero() {
		f.m.added.Observe(time.Since(st.start).Seconds())
	}
}

// forward runs one attempt; a non-nil error means the target failed before
// anything was written to w. A failure after the answer started aborts the
// client's connection (http.ErrAbortHandler), as the server expects.
func (f *Front) forward(w http.ResponseWriter, r *http.Request, st *fwd) error {
	f.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), fwdKey{}, st)))
	return st.err
}

// proxy sends a dispatched request to its board with a fresh mark. An
// idempotent GET or HEAD without a body whose board fails is retried once
// on another board. Nothing else is retried here: a POST may have run
// before its board failed, and a device action with an Idempotency-Key is
// made safe to repeat by the device API's replay, which the client (or the
// UI) reaches by retrying itself. The ticket in hand is always Done.
func (f *Front) proxy(w http.ResponseWriter, r *http.Request, d *sched.Dispatcher, req *sched.Request, t sched.Ticket, self string, start time.Time) {
	cur := t
	defer func() { cur.Done() }()
	retryable := (r.Method == http.MethodGet || r.Method == http.MethodHead) &&
		r.ContentLength == 0 && len(r.TransferEncoding) == 0 && (req.Board == "" || req.Board == "any")
	epoch := f.c.Epoch()
	var bind Binding
	body, err := f.bindBody(w, r, &bind, req.Client)
	if err != nil {
		return
	}
	for attempt := 0; ; attempt++ {
		rewind(r, body)
		tok := f.marks.SignString(KindDispatch, epoch, cur.Board, &bind)
		err := f.forward(w, r, &fwd{target: cur.Board, addr: cur.Addr, header: HeaderMark, token: tok, start: start})
		if err == nil {
			f.m.forwarded.WithLabelValues(cur.Board, OutcomeOK).Inc()
			return
		}
		if r.Context().Err() != nil {
			f.m.forwarded.WithLabelValues(cur.Board, OutcomeCanceled).Inc()
			badGateway(w, cur.Board, err)
			return
		}
		failed := cur.Board
		f.m.errors.WithLabelValues(failed).Inc()
		f.log.Warn("dispatch: board failed", "board", failed, "addr", cur.Addr, "method", r.Method, "path", r.URL.Path, "err", err)
		if !retryable || attempt > 0 {
			f.m.forwarded.WithLabelValues(failed, OutcomeError).Inc()
			badGateway(w, failed, err)
			return
		}
		cur.Done()
		cur = sched.Ticket{}
		again := *req
		again.Exclude = []string{failed} // the scheduler chooses the retry's board, any but this one
		nt, aerr := d.Acquire(r.Context(), &again)
		if aerr != nil {
			f.m.forwarded.WithLabelValues(failed, OutcomeError).Inc()
			badGateway(w, failed, err)
			return
		}
		f.m.forwarded.WithLabelValues(failed, OutcomeRetried).Inc()
		f.m.retries.Inc()
		cur = nt
		if cur.Board == self {
			f.runLocal(w, r)
			return
		}
	}
}

// bindBody binds r (and its body, read into memory when it is small
// enough for a digest) for a dispatch or redirect mark. On an error it has
// answered the client.
func (f *Front) bindBody(w http.ResponseWriter, r *http.Request, b *Binding, client netip.Addr) ([]byte, error) {
	mode := bodyMode(r)
	var body []byte
	if mode == BodyDigest {
		var err error
		if body, err = readBound(r); err != nil {
			writeJSON(w, http.StatusBadRequest, errorBody{Error: "dispatch: reading the request body: " + err.Error()})
			return nil, err
		}
	}
	BindRequest(b, r, mode, body, client)
	return body, nil
}

// bufPool lends the proxy its copy buffers.
type bufPool struct{}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (bufPool) Get() []byte  { return *copyBufs.Get().(*[]byte) }
func (bufPool) Put(b []byte) { copyBufs.Put(&b) }
