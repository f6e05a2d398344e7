package dispatch

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httputil"
	"sync"
	"time"
)

// fwd is one forwarding attempt, carried to the proxy's hooks in the
// request context.
type fwd struct {
	target string // board (or master) name
	addr   string // its host:port
	header string // HeaderMark or HeaderVia
	token  string
	body   []byte    // the request's body, read once on entry: each attempt sends it
	start  time.Time // non-zero: observe the master's added latency
	err    error     // set by the error handler: nothing was written
	out    outbound  // the direct path's request (forward.go)
}

type fwdKey struct{}

// forwarder is what a forward to another board needs: the transport, the
// ReverseProxy for what the direct path does not carry (forward.go), and
// what to do with a board's 401 (authrefused.go).
type forwarder struct {
	tr            http.RoundTripper
	rp            *httputil.ReverseProxy
	onAuthRefused func(string)
	verified      func(*http.Request) bool
	credsDiffer   func(string) bool
	authLog       authLog
}

// errHeadTimeout: the target's listener answered 408, the request header
// did not reach it in time; nothing ran.
var errHeadTimeout = errors.New("dispatch: the request header did not reach the board in time (its link is congested); nothing ran")

// errResent: the board refused a request the transport sent it twice.
var errResent = errors.New("dispatch: the board's connection died after it received the request, and it refused the transport's resend")

func (f *Front) newProxy() *httputil.ReverseProxy {
	return &httputil.ReverseProxy{
		Rewrite:    f.rewrite,
		Transport:  f.out.tr,
		BufferPool: bufPool{},
		ErrorLog:   slog.NewLogLogger(f.log.Handler(), slog.LevelDebug),
		ModifyResponse: func(resp *http.Response) error {
			st, _ := resp.Request.Context().Value(fwdKey{}).(*fwd)
			return f.checkAnswer(resp, st)
		},
		ErrorHandler: func(_ http.ResponseWriter, r *http.Request, err error) {
			if st, ok := r.Context().Value(fwdKey{}).(*fwd); ok {
				st.err = err
			}
		},
	}
}

// checkAnswer looks at the board's answer to the attempt st before it
// goes to the client: an error means the board failed (nothing written).
func (f *Front) checkAnswer(resp *http.Response, st *fwd) error {
	// The transport sends an idempotent request again by itself when
	// its connection died before an answer; the board had already
	// used the mark up, so it says "replayed". For the client the
	// board failed: 502 (or the GET retry on another board).
	if resp.StatusCode == http.StatusForbidden && resp.Header.Get(HeaderRefused) == RefuseReplayed {
		return errResent
	}
	// The target's listener gave up on the request header (a
	// congested link): the request never ran there.
	if resp.StatusCode == http.StatusRequestTimeout && resp.Header.Get(HeaderRefused) == RefuseHeadTimeout {
		return errHeadTimeout
	}
	return f.authRefused(resp, st)
}

// rewrite aims the outbound request at the attempt's board and keeps the
// client's Host, X-Forwarded-For (appended), X-Forwarded-Host and -Proto.
func (f *Front) rewrite(pr *httputil.ProxyRequest) {
	st, _ := pr.In.Context().Value(fwdKey{}).(*fwd)
	if st == nil {
		return
	}
	pr.Out.URL.Scheme = f.cfg.scheme
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
		f.m.added.Update(time.Since(st.start).Seconds())
	}
}

// forward runs one attempt; a non-nil error means the target failed before
// anything was written to w. A failure after the answer started aborts the
// client's connection (http.ErrAbortHandler), as the server expects. Most
// requests take the direct path (forward.go), the rest ReverseProxy.
func (f *Front) forward(w http.ResponseWriter, r *http.Request, st *fwd) error {
	if ct, ok := f.direct(r); ok {
		return f.forwardDirect(ct, w, r, st)
	}
	out := r.WithContext(context.WithValue(r.Context(), fwdKey{}, st))
	if len(st.body) > 0 { // this attempt's own reader over the body; r's stays for a run here
		out.Body, out.ContentLength = io.NopCloser(bytes.NewReader(st.body)), int64(len(st.body))
	}
	f.out.rp.ServeHTTP(w, out)
	return st.err
}

// bufPool lends the proxy its copy buffers.
type bufPool struct{}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

func (bufPool) Get() []byte  { return *copyBufs.Get().(*[]byte) }
func (bufPool) Put(b []byte) { copyBufs.Put(&b) }

// direct returns f's connTransport when r can take the direct path.
func (f *Front) direct(r *http.Request) (*connTransport, bool) {
	ct, ok := f.out.tr.(*connTransport)
	if !ok {
		return nil, false
	}
	switch f.cfg.scheme {
	case "http":
	case "https":
		if ct.o.TLS == nil {
			return nil, false
		}
	default:
		return nil, false
	}
	switch {
	case r.ContentLength == 0:
	case r.ContentLength > 0 && r.ContentLength <= fastBodyMax && r.Body != nil && r.Body != http.NoBody:
	default:
		return nil, false
	}
	h := r.Header
	if len(h["Upgrade"]) > 0 || len(h["Expect"]) > 0 ||
		len(r.TransferEncoding) > 0 || len(r.Trailer) > 0 ||
		r.URL.Opaque != "" || r.Method == http.MethodConnect || r.Method == "" ||
		!plainHost(r.Host) || !plainQuery(r.URL.RawQuery) || hasCTL(r.URL.RawQuery) {
		return nil, false
	}
	return ct, true
}
