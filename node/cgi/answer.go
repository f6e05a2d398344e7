package cgi

import (
	"bytes"
	"fmt"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
)

// contentSecurityPolicy is set on every answer of /cgi-bin/, replacing any
// the program gives: a program's page is served from the UI's origin, so
// it runs no script, submits no form, loads nothing but its own images
// and inline styles, and is framed by no one; "sandbox" also gives it an
// opaque origin, so it cannot act as the UI even through a browser bug in
// the rest.
const contentSecurityPolicy = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; form-action 'none'; frame-ancestors 'none'; sandbox"

// confine sets the headers that keep a program's answer from acting as
// the UI: the CSP above and no content sniffing.
func confine(h http.Header) {
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
}

// answer is a program's parsed CGI answer.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// hopHeaders are a program's headers that are not passed on: the handler
// sets the length itself, and the connection is not the program's.
var hopHeaders = []string{"Content-Length", "Connection", "Transfer-Encoding", "Keep-Alive", "Upgrade", "Trailer"}

// parseAnswer reads a CGI answer (RFC 3875 section 6): header lines, a
// blank line, the body. Status sets the status; Location without one is
// a 302; otherwise Content-Type is required.
func parseAnswer(out []byte) (answer, error) {
	a := answer{header: http.Header{}}
	head, body, ok := cutHead(out)
	if !ok {
		return a, fmt.Errorf("no headers (a CGI answer starts with Content-Type: and a blank line)")
	}
	for _, line := range strings.Split(head, "\n") {
		line = strings.TrimSuffix(line, "\r")
		k, v, ok := strings.Cut(line, ":")
		k, v = textproto.TrimString(k), textproto.TrimString(v)
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return a, fmt.Errorf("bad header line %q", line)
		}
		if k == "Status" {
			if len(v) < 3 {
				return a, fmt.Errorf("bad Status %q", v)
			}
			code, err := strconv.Atoi(v[:3])
			if err != nil || code < 100 || code > 599 {
				return a, fmt.Errorf("bad Status %q", v)
			}
			a.status = code
			continue
		}
		a.header.Add(k, v)
	}
	if a.header.Get("Location") != "" && a.status == 0 {
		a.status = http.StatusFound
	}
	if a.status == 0 {
		if a.header.Get("Content-Type") == "" {
			return a, fmt.Errorf("missing required Content-Type in headers")
		}
		a.status = http.StatusOK
	}
	for _, k := range hopHeaders {
		a.header.Del(k)
	}
	a.body = body
	return a, nil
}

// cutHead splits out at its first empty line (LF or CRLF); ok is false
// when there is none or nothing before it.
func cutHead(out []byte) (head string, body []byte, ok bool) {
	for i := 0; i < len(out); {
		j := bytes.IndexByte(out[i:], '\n')
		if j < 0 {
			return "", nil, false
		}
		line := bytes.TrimSuffix(out[i:i+j], []byte("\r"))
		if len(line) == 0 {
			return string(out[:max(i-1, 0)]), out[i+j+1:], i > 0
		}
		i += j + 1
	}
	return "", nil, false
}
