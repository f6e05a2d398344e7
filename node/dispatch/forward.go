package dispatch

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The direct path of a forward: for the requests that connTransport
// carries itself (no body or a small one of known length, no Expect or
// Upgrade), the Front writes the outbound request head straight from the
// inbound request onto the board's connection and copies the answer's
// header map into the client's, instead of going through
// httputil.ReverseProxy, which clones the request, its header and URL,
// rebuilds the forwarding headers as new slices, adds a client trace and
// copies every answer header value one by one. With connTransport's own
// trims, the master's allocations per forward fell from about 69 to 39
// (docs/notes/master-cpu.md). What goes out and what comes back is what
// ReverseProxy with f.rewrite sends and returns
// (TestDirectMatchesReverseProxy holds the two together); every other
// request keeps ReverseProxy.

// outbound is one request on the direct path: what connTransport.send
// needs to write it and to pass informational answers on.
type outbound struct {
	r    *http.Request
	w    http.ResponseWriter
	st   *fwd
	host string
}

// forwardDirect is forward's direct path: one attempt at st's board.
func (f *Front) forwardDirect(ct *connTransport, w http.ResponseWriter, r *http.Request, st *fwd) error {
	if !st.start.IsZero() {
		f.m.added.Update(time.Since(st.start).Seconds())
	}
	st.out = outbound{r: r, w: w, st: st, host: r.Host}
	resp, err := ct.send(r.Context(), connKey{f.cfg.scheme, hostPort(f.cfg.scheme, st.addr)}, r, &st.out)
	if err != nil {
		return err
	}
	removeHopByHop(resp.Header)
	if err := f.checkAnswer(resp, st); err != nil {
		resp.Body.Close()
		return err
	}
	h := w.Header()
	for k, vv := range resp.Header {
		if old, ok := h[k]; ok {
			h[k] = append(old, vv...)
		} else {
			h[k] = vv // the answer's own slice: the response is not used again
		}
	}
	announced := len(resp.Trailer)
	if announced > 0 {
		keys := make([]string, 0, announced)
		for k := range resp.Trailer {
			keys = append(keys, k)
		}
		h.Add("Trailer", strings.Join(keys, ", "))
	}
	w.WriteHeader(resp.StatusCode)
	if err := f.copyAnswer(w, resp); err != nil {
		resp.Body.Close()
		panic(http.ErrAbortHandler) // the answer started: only an abort tells the client
	}
	resp.Body.Close() // now, to fill resp.Trailer
	if len(resp.Trailer) > 0 {
		_ = http.NewResponseController(w).Flush()
	}
	for k, vv := range resp.Trailer {
		if len(resp.Trailer) != announced {
			k = http.TrailerPrefix + k
		}
		for _, v := range vv {
			h.Add(k, v)
		}
	}
	return nil
}

// copyAnswer copies the answer's body to w, flushing after every write
// for a stream (an event stream, or a body of unknown length), as
// ReverseProxy does.
func (f *Front) copyAnswer(w http.ResponseWriter, resp *http.Response) error {
	var rc *http.ResponseController
	if resp.ContentLength == -1 || eventStream(resp.Header) {
		rc = http.NewResponseController(w)
		_ = rc.Flush() // the header goes out before the first event
	}
	bp := copyBufs.Get().(*[]byte) // the pointer back, not bufPool's Put: that allocates one
	defer copyBufs.Put(bp)
	buf := *bp
	for {
		nr, rerr := resp.Body.Read(buf)
		if rerr != nil && rerr != io.EOF && rerr != context.Canceled {
			f.log.Debug("dispatch: read error during the answer's body copy", "err", rerr)
		}
		if nr > 0 {
			nw, werr := w.Write(buf[:nr])
			if werr != nil {
				return werr
			}
			if nw != nr {
				return io.ErrShortWrite
			}
			if rc != nil {
				_ = rc.Flush()
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}

// eventStream reports whether the answer is text/event-stream (Server-Sent
// Events), by mime.ParseMediaType as ReverseProxy, which is only called
// when the type could be that.
func eventStream(h http.Header) bool {
	ct := h.Get("Content-Type")
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		if !strings.EqualFold(strings.TrimSpace(ct[:i]), "text/event-stream") {
			return false
		}
	} else if !strings.EqualFold(strings.TrimSpace(ct), "text/event-stream") {
		return false
	}
	base, _, _ := mime.ParseMediaType(ct)
	return base == "text/event-stream"
}

// got1xx passes an informational answer to the client, as ReverseProxy.
func (o *outbound) got1xx(code int, hdr http.Header) {
	h := o.w.Header()
	for k, vv := range hdr {
		h[k] = append(h[k], vv...)
	}
	o.w.WriteHeader(code)
	clear(h) // WriteHeader does not clear them for a 1xx
}

// hopHeaders are removed on the way, both ways (RFC 9110 7.6.1; the list
// of httputil.ReverseProxy).
var hopHeaders = [...]string{
	"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate",
	"Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade",
}

// removeHopByHop deletes the hop-by-hop headers of h and those its
// Connection header names.
func removeHopByHop(h http.Header) {
	for _, v := range h["Connection"] {
		for sf := range strings.SplitSeq(v, ",") {
			if sf = strings.Trim(sf, " \t\r\n"); sf != "" {
				h.Del(sf)
			}
		}
	}
	for _, k := range hopHeaders {
		delete(h, k)
	}
}

// write writes the outbound request on bw: the inbound request as
// ReverseProxy with f.rewrite and Request.Write would send it (request
// line; Host; User-Agent only when the client sent one; Content-Length;
// the other headers sorted by name, without the hop-by-hop ones, with
// X-Forwarded-For appended and the mark; the body).
func (o *outbound) write(bw *bufio.Writer) error {
	r, st := o.r, o.st
	bw.WriteString(r.Method)
	bw.WriteByte(' ')
	if p := r.URL.EscapedPath(); p != "" {
		if hasCTL(p) {
			return errors.New("dispatch: can't write control character in the request path")
		}
		bw.WriteString(p)
	} else {
		bw.WriteByte('/')
	}
	if r.URL.ForceQuery || r.URL.RawQuery != "" {
		bw.WriteByte('?')
		bw.WriteString(r.URL.RawQuery)
	}
	bw.WriteString(" HTTP/1.1\r\nHost: ")
	bw.WriteString(o.host)
	bw.WriteString("\r\n")
	if ua := r.Header["User-Agent"]; len(ua) > 0 {
		if v := ua[0]; v != "" {
			writeField(bw, "User-Agent", v)
		}
	}
	switch {
	case r.ContentLength > 0:
		bw.WriteString("Content-Length: ")
		var nb [20]byte
		bw.Write(strconv.AppendInt(nb[:0], r.ContentLength, 10))
		bw.WriteString("\r\n")
	case r.Method == http.MethodPost || r.Method == http.MethodPut || r.Method == http.MethodPatch:
		bw.WriteString("Content-Length: 0\r\n")
	}

	var stack [32]string
	keys := stack[:0]
	conn := r.Header["Connection"]
	for k := range r.Header {
		if skipOut(k, conn) || !validFieldName(k) {
			continue
		}
		keys = append(keys, k)
	}
	keys = append(keys, "X-Forwarded-Host", "X-Forwarded-Proto", st.header)
	if teTrailers(r.Header["Te"]) {
		keys = append(keys, "Te") // the client takes trailers: say so to the board, as ReverseProxy
	}
	clientIP, _, addrErr := net.SplitHostPort(r.RemoteAddr)
	if addrErr == nil {
		keys = append(keys, "X-Forwarded-For")
	}
	slices.Sort(keys)
	for _, k := range keys {
		switch k {
		case "X-Forwarded-For":
			prior := r.Header["X-Forwarded-For"]
			if !cleanValues(prior) { // as ReverseProxy: joined, then cleaned as one value
				writeField(bw, k, strings.Join(prior, ", ")+", "+clientIP)
				continue
			}
			bw.WriteString("X-Forwarded-For: ")
			for _, v := range prior {
				bw.WriteString(v)
				bw.WriteString(", ")
			}
			bw.WriteString(clientIP)
			bw.WriteString("\r\n")
		case "X-Forwarded-Host":
			o.writeForwarded(bw, k, r.Host)
		case "X-Forwarded-Proto":
			proto := "http"
			if r.TLS != nil {
				proto = "https"
			}
			o.writeForwarded(bw, k, proto)
		case st.header:
			writeField(bw, k, st.token)
		case "Te":
			bw.WriteString("Te: trailers\r\n")
		default:
			for _, v := range r.Header[k] {
				writeField(bw, k, v)
			}
		}
	}
	bw.WriteString("\r\n")
	if r.ContentLength > 0 {
		if n := len(st.body); int64(n) != r.ContentLength {
			return fmt.Errorf("dispatch: request body: ContentLength=%d with Body length %d", r.ContentLength, n)
		}
		bw.Write(st.body) // read once on entry (body.go): every attempt writes the same bytes
	}
	return nil
}

// writeForwarded writes the client's own X-Forwarded-Host or -Proto (set
// by the first board), else ours.
func (o *outbound) writeForwarded(bw *bufio.Writer, k, ours string) {
	if v := o.r.Header[k]; len(v) > 0 {
		for _, s := range v {
			writeField(bw, k, s)
		}
		return
	}
	writeField(bw, k, ours)
}

// skipOut reports whether the inbound header k is not copied as it is:
// written apart (Host, User-Agent, Content-Length, the forwarding headers
// and marks), hop-by-hop, or named in the Connection header.
func skipOut(k string, conn []string) bool {
	switch k {
	case "Host", "User-Agent", "Content-Length", "Transfer-Encoding", "Trailer",
		"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", HeaderMark, HeaderVia,
		"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Upgrade":
		return true
	}
	for _, v := range conn {
		for sf := range strings.SplitSeq(v, ",") {
			if canonicalIs(strings.Trim(sf, " \t\r\n"), k) {
				return true
			}
		}
	}
	return false
}

// canonicalIs reports whether textproto.CanonicalMIMEHeaderKey(tok) == k
// (the key Header.Del(tok) deletes), without allocating: a token with a
// byte that is not a header name byte stays as it is.
func canonicalIs(tok, k string) bool {
	if len(tok) != len(k) || !validFieldName(tok) {
		return tok == k
	}
	upper := true
	for i := 0; i < len(tok); i++ {
		c := tok[i]
		switch {
		case upper && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
		case !upper && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		if c != k[i] {
			return false
		}
		upper = c == '-'
	}
	return true
}

func writeField(bw *bufio.Writer, k, v string) {
	bw.WriteString(k)
	bw.WriteString(": ")
	writeValue(bw, v)
	bw.WriteString("\r\n")
}

// writeValue writes a header value as Header.Write does: CR and LF become
// spaces, and leading and trailing spaces and tabs go.
func writeValue(bw *bufio.Writer, v string) {
	v = strings.Trim(v, " \t")
	if strings.ContainsAny(v, "\r\n") {
		v = strings.Trim(strings.NewReplacer("\r", " ", "\n", " ").Replace(v), " \t")
	}
	bw.WriteString(v)
}

// teTrailers reports whether a TE header names "trailers" among its
// comma-separated tokens (ASCII case-insensitive, as httpguts).
func teTrailers(vs []string) bool {
	for _, v := range vs {
		for t := range strings.SplitSeq(v, ",") {
			if asciiEqualFold(strings.Trim(t, " \t"), "trailers") {
				return true
			}
		}
	}
	return false
}

// asciiEqualFold is strings.EqualFold for ASCII only: a non-ASCII byte
// never matches (EqualFold would match "ſ" to "s").
func asciiEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// cleanValues: none of vs has CR, LF, or a space or tab at either end
// (as every value the server parsed).
func cleanValues(vs []string) bool {
	for _, v := range vs {
		if v != strings.Trim(v, " \t") || strings.ContainsAny(v, "\r\n") {
			return false
		}
	}
	return true
}

// validFieldName: a token (RFC 9110 5.6.2); Header.Write drops the others.
func validFieldName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// plainHost: a Host of letters, digits, dots, dashes, underscores, colons
// and brackets, which Request.Write sends as it is (no IDNA, no zone).
func plainHost(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '.' || c == '-' || c == '_' || c == ':' || c == '[' || c == ']':
		default:
			return false
		}
	}
	return true
}

// plainQuery: a query ReverseProxy sends unchanged (no ';', every '%'
// followed by two hex digits, not too many parameters, no GODEBUG
// urlmaxqueryparams: ews sets none).
func plainQuery(q string) bool {
	if strings.Count(q, "&") >= 1000 {
		return false
	}
	for i := 0; i < len(q); i++ {
		switch q[i] {
		case ';':
			return false
		case '%':
			if i+2 >= len(q) || !isHex(q[i+1]) || !isHex(q[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// hasCTL: a control byte, which may not go into a request line.
func hasCTL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f {
			return true
		}
	}
	return false
}
