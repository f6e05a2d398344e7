package dispatch

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// recBoard is a board that records each request's bytes as they arrived
// and answers every one with the same raw answer.
type recBoard struct {
	ln     net.Listener
	answer string
	mu     sync.Mutex
	got    []string
}

func newRecBoard(t testing.TB, answer string) *recBoard {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &recBoard{ln: ln, answer: answer}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go b.serve(c)
		}
	}()
	return b
}

func (b *recBoard) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		var head strings.Builder
		n := 0
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			head.WriteString(line)
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(strings.TrimSpace(v))
			}
			if line == "\r\n" {
				break
			}
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		b.mu.Lock()
		b.got = append(b.got, head.String()+string(body))
		b.mu.Unlock()
		if _, err := io.WriteString(c, b.answer); err != nil {
			return
		}
	}
}

func (b *recBoard) last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.got) == 0 {
		return ""
	}
	return b.got[len(b.got)-1]
}

// recWriter records what a handler writes: every WriteHeader with the
// header at that moment, the body and the flushes.
type recWriter struct {
	h       http.Header
	codes   []string // "code header" for every WriteHeader
	body    strings.Builder
	flushes int
}

func (w *recWriter) Header() http.Header { return w.h }
func (w *recWriter) Write(p []byte) (int, error) {
	if len(w.codes) == 0 {
		w.WriteHeader(200)
	}
	return w.body.Write(p)
}
func (w *recWriter) WriteHeader(code int) {
	var keys []string
	for k, vv := range w.h {
		keys = append(keys, k+"="+strings.Join(vv, "|"))
	}
	slices.Sort(keys)
	w.codes = append(w.codes, strconv.Itoa(code)+" "+strings.Join(keys, " "))
}
func (w *recWriter) Flush() { w.flushes++ }

func (w *recWriter) String() string {
	var keys []string
	for k, vv := range w.h {
		keys = append(keys, k+"="+strings.Join(vv, "|"))
	}
	slices.Sort(keys)
	return strings.Join(w.codes, "\n") + "\nbody " + w.body.String() + "\nafter " + strings.Join(keys, " ")
}

// The direct path sends each board the bytes httputil.ReverseProxy with
// f.rewrite sends, and gives the client the answer ReverseProxy gives:
// the same request through both, compared byte for byte.
func TestDirectMatchesReverseProxy(t *testing.T) {
	const plain = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nKeep-Alive: timeout=5\r\nConnection: X-Hop\r\nX-Hop: gone\r\nX-Board: ews2\r\n\r\n{}"
	answers := map[string]string{
		"plain":                plain,
		"early hints":          "HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n" + plain,
		"chunked with trailer": "HTTP/1.1 200 OK\r\nTrailer: X-Sum\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\nX-Sum: 7\r\n\r\n",
		"event stream":         "HTTP/1.1 200 OK\r\nContent-Type: Text/Event-Stream; charset=utf-8\r\nContent-Length: 9\r\n\r\ndata: x\n\n",
		"close":                "HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 3\r\n\r\nno\n",
	}
	requests := []struct {
		name, method, target, body string
		hdr                        map[string][]string
		tls                        bool
	}{
		{"browser GET", "GET", "/api/devices/s1?x=1&y=%41", "", map[string][]string{
			"User-Agent": {"Mozilla/5.0"}, "Accept": {"*/*"}, "Connection": {"keep-alive, X-Drop"}, "X-Drop": {"1"},
			"Proxy-Authorization": {"Basic x"}, "Forwarded": {"for=1.2.3.4"}, "Cookie": {"a=1", "b=2"},
		}, false},
		{"follower's forward", "GET", "/", "", map[string][]string{
			"X-Forwarded-For": {"10.0.0.9", "10.0.0.8"}, "X-Forwarded-Host": {"ews.local"}, "X-Forwarded-Proto": {"https"},
			HeaderVia: {"old"}, HeaderMark: {"old"}, "Keep-Alive": {"timeout=5"},
		}, false},
		{"POST with a body, no agent", "POST", "/api/devices/relay1/toggle", `{"on":true}`, map[string][]string{
			"Content-Type": {"application/json"}, "Idempotency-Key": {"k1"}, "User-Agent": {""},
		}, true},
		{"POST without a body", "POST", "/api/devices/relay1/toggle", "", nil, false},
		{"takes trailers", "GET", "/", "", map[string][]string{"Te": {"gzip, Trailers;q=1", "trailers"}, "Connection": {"TE"}}, false},
		{"TE without trailers", "GET", "/", "", map[string][]string{"Te": {"gzip", "trailerſ"}}, false},
		{"DELETE without a body", "DELETE", "/api/x", "", nil, false},
	}
	for aname, answer := range answers {
		for _, rq := range requests {
			t.Run(aname+"/"+rq.name, func(t *testing.T) {
				board := newRecBoard(t, answer)
				f, err := NewFront(Options{
					Cluster: &fakeCluster{self: "ews1"}, Local: http.NotFoundHandler(), Marker: mustMarker(t),
					Transport: NewTransport(TransportOptions{}), Logger: slog.New(slog.DiscardHandler),
				})
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				run := func(direct bool) (string, string) {
					var body io.Reader
					if rq.body != "" {
						body = strings.NewReader(rq.body)
					}
					r := httptest.NewRequest(rq.method, "http://ews.example:8080"+rq.target, body)
					if rq.body == "" {
						r.Body = http.NoBody
					}
					r.RemoteAddr = "192.0.2.7:41000"
					if !rq.tls {
						r.TLS = nil
					}
					for k, v := range rq.hdr {
						r.Header[k] = slices.Clone(v)
					}
					r = r.WithContext(context.WithValue(r.Context(), http.ServerContextKey, &http.Server{}))
					w := &recWriter{h: http.Header{"Set-Cookie": {"ews_board=ews2"}}}
					st := &fwd{target: "ews2", addr: board.ln.Addr().String(), header: HeaderMark, token: "TOKEN", body: []byte(rq.body)}
					if rq.body == "" {
						st.body = nil
					}
					if _, ok := f.direct(r); !ok {
						t.Fatal("the request does not take the direct path")
					}
					if direct {
						err = f.forward(w, r, st)
					} else {
						f.out.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), fwdKey{}, st)))
						err = st.err
					}
					if err != nil {
						t.Fatalf("direct %v: %v", direct, err)
					}
					return board.last(), w.String()
				}
				wantOut, wantAns := run(false)
				gotOut, gotAns := run(true)
				if gotOut != wantOut {
					t.Errorf("the board got\n%q\nReverseProxy sends\n%q", gotOut, wantOut)
				}
				if gotAns != wantAns {
					t.Errorf("the client got\n%s\nReverseProxy gives\n%s", gotAns, wantAns)
				}
				for _, gone := range []string{"Proxy-Authorization:", "X-Drop:", "Keep-Alive:", "\nForwarded:", "Connection:", "old"} {
					if strings.Contains(gotOut, gone) {
						t.Errorf("%s went to the board:\n%s", gone, gotOut)
					}
				}
				if !strings.Contains(gotOut, "\r\nX-Ews-Dispatch: TOKEN\r\n") || !strings.Contains(gotOut, "192.0.2.7\r\n") {
					t.Errorf("no mark or X-Forwarded-For:\n%s", gotOut)
				}
			})
		}
	}
}

// Requests the direct path does not write itself keep ReverseProxy.
func TestDirectTakes(t *testing.T) {
	f, err := NewFront(Options{
		Cluster: &fakeCluster{self: "ews1"}, Local: http.NotFoundHandler(), Marker: mustMarker(t),
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, tt := range []struct {
		name   string
		change func(r *http.Request)
		want   bool
	}{
		{"plain GET", func(*http.Request) {}, true},
		{"upgrade", func(r *http.Request) { r.Header.Set("Upgrade", "websocket") }, false},
		{"expect", func(r *http.Request) { r.Header.Set("Expect", "100-continue") }, false},
		{"TE", func(r *http.Request) { r.Header.Set("Te", "trailers") }, true},
		{"streamed body", func(r *http.Request) { r.Body, r.ContentLength = io.NopCloser(strings.NewReader("x")), -1 }, false},
		{"large body", func(r *http.Request) { r.Body, r.ContentLength = io.NopCloser(strings.NewReader("x")), fastBodyMax+1 }, false},
		{"query with ;", func(r *http.Request) { r.URL.RawQuery = "a=1;b=2" }, false},
		{"query with a bad escape", func(r *http.Request) { r.URL.RawQuery = "a=%4" }, false},
		{"host with a zone", func(r *http.Request) { r.Host = "[fe80::1%25eth0]:80" }, false},
		{"no host", func(r *http.Request) { r.Host = "" }, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "http://ews.example/api", nil)
			tt.change(r)
			if _, got := f.direct(r); got != tt.want {
				t.Errorf("direct = %v, want %v", got, tt.want)
			}
		})
	}
}

func mustMarker(t testing.TB) *Marker {
	t.Helper()
	m, err := NewMarker(RandomKey(), MarkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// FuzzDirectMatchesReverseProxy: for any request the direct path takes,
// the board receives the bytes ReverseProxy would have sent.
func FuzzDirectMatchesReverseProxy(f *testing.F) {
	f.Add(uint8(0), "/api/devices/s1", "x=1&y=%41", "User-Agent: a\nConnection: keep-alive, x-drop\nX-Drop: 1\nx-forwarded-for: 1.2.3.4\nCookie: a\nCookie: b", "")
	f.Add(uint8(1), "/api/devices/relay1/toggle", "", "X-Forwarded-For: 10.0.0.1\nX-Forwarded-Proto: https\nX-Ews-Via: v\nUser-Agent: ", `{"on":true}`)
	f.Add(uint8(3), "/a b/é", "q", "Keep-Alive: 5\nConnection: Foo-Bar,\tx-FOO-bar\nFoo-Bar: 1\nX-Odd:  spaced \n: empty\nBad Key: 1", "")
	f.Add(uint8(5), "", "", "Forwarded: for=x\nProxy-Authorization: Basic y\nX-Multi: 1\nX-Multi: 2", "")
	f.Add(uint8(6), "/x", "", "Connection: foo-bar\nfoo-bar: kept: ReverseProxy deletes the canonical key only", "")
	f.Add(uint8(0), "/x", "", "Te: deflate, TRAILERS\nTe: trailerſ", "")
	board := newRecBoard(f, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}")
	front, err := NewFront(Options{
		Cluster: &fakeCluster{self: "ews1"}, Local: http.NotFoundHandler(), Marker: mustMarker(f),
		Transport: NewTransport(TransportOptions{}), Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		f.Fatal(err)
	}
	defer front.Close()
	methods := [...]string{"GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS"}
	f.Fuzz(func(t *testing.T, m uint8, path, query, hdr, body string) {
		mk := func() *http.Request {
			r := &http.Request{
				Method: methods[int(m)%len(methods)], URL: &url.URL{Path: path, RawQuery: query},
				Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Host: "ews.example:8080", Header: http.Header{}, RemoteAddr: "192.0.2.7:41000", Body: http.NoBody,
			}
			for line := range strings.SplitSeq(hdr, "\n") {
				if k, v, ok := strings.Cut(line, ":"); ok {
					r.Header[k] = append(r.Header[k], v)
				}
			}
			if body != "" {
				r.Body, r.ContentLength = io.NopCloser(strings.NewReader(body)), int64(len(body))
			}
			return r.WithContext(context.WithValue(context.Background(), http.ServerContextKey, &http.Server{}))
		}
		if _, ok := front.direct(mk()); !ok {
			t.Skip("ReverseProxy's")
		}
		send := func(direct bool) (string, error) {
			r := mk()
			st := &fwd{target: "ews2", addr: board.ln.Addr().String(), header: HeaderMark, token: "TOKEN"}
			if body != "" {
				st.body = []byte(body)
			}
			w := &recWriter{h: http.Header{}}
			if direct {
				err := front.forward(w, r, st)
				return board.last(), err
			}
			front.out.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), fwdKey{}, st)))
			return board.last(), st.err
		}
		want, werr := send(false)
		got, gerr := send(true)
		if (werr == nil) != (gerr == nil) {
			t.Fatalf("ReverseProxy: %v, direct: %v", werr, gerr)
		}
		if werr == nil && got != want {
			t.Errorf("the board got\n%q\nReverseProxy sends\n%q", got, want)
		}
	})
}
