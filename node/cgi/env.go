package cgi

import (
	"encoding/json"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/ews-firmware/ews/internal/sandbox"
)

// credentialHeaders are never passed to a program (net/http/cgi would make
// each an HTTP_* variable): the bearer token, basic password and session
// cookie of the client, and the boards' dispatch marks. A program that
// needs to know who asked reads REMOTE_USER / EWS_USER.
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie", "X-Ews-Dispatch", "X-Ews-Via"}

// withoutCredentials is r without credentialHeaders (a shallow copy with
// its own header; r itself is left as it is).
func withoutCredentials(r *http.Request) *http.Request {
	strip := false
	for _, k := range credentialHeaders {
		if _, ok := r.Header[k]; ok {
			strip = true
		}
	}
	if !strip {
		return r
	}
	r2 := *r
	r2.Header = r.Header.Clone()
	for _, k := range credentialHeaders {
		r2.Header.Del(k)
	}
	return &r2
}

// maxDevicesEnv caps EWS_DEVICES below the kernel's limit for one string.
const maxDevicesEnv = 120 << 10

// environ is the program's whole environment (RFC 3875 meta-variables,
// the request's headers but credentialHeaders, and EWS_*), built from
// nothing.
func (h *Handler) environ(r *http.Request, name, file string) []string {
	root := Prefix + name
	port := "80"
	if r.TLS != nil {
		port = "443"
	}
	host, p, err := net.SplitHostPort(r.Host)
	if err == nil {
		port = p
	} else {
		host = r.Host
	}
	env := []string{
		"SERVER_SOFTWARE=ews",
		"SERVER_PROTOCOL=HTTP/1.1",
		"GATEWAY_INTERFACE=CGI/1.1",
		"SERVER_NAME=" + host,
		"SERVER_PORT=" + port,
		"REQUEST_METHOD=" + r.Method,
		"QUERY_STRING=" + r.URL.RawQuery,
		"REQUEST_URI=" + r.URL.RequestURI(),
		"PATH_INFO=" + strings.TrimPrefix(r.URL.Path, root),
		"SCRIPT_NAME=" + root,
		"SCRIPT_FILENAME=" + file,
		"EWS_NODE=" + h.node,
	}
	if ip, p, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		env = append(env, "REMOTE_ADDR="+ip, "REMOTE_HOST="+ip, "REMOTE_PORT="+p)
	} else {
		env = append(env, "REMOTE_ADDR="+r.RemoteAddr, "REMOTE_HOST="+r.RemoteAddr)
	}
	if r.TLS != nil {
		env = append(env, "HTTPS=on")
	}
	if r.Host != "" {
		env = append(env, "HTTP_HOST="+r.Host)
	}
	for k, v := range r.Header {
		k = strings.Map(envName, k)
		if k == "PROXY" || k == "HOST" { // httpoxy; Host is above
			continue
		}
		env = append(env, "HTTP_"+k+"="+strings.Join(v, ", "))
	}
	if r.ContentLength > 0 {
		env = append(env, "CONTENT_LENGTH="+strconv.FormatInt(r.ContentLength, 10))
	}
	if ct := r.Header.Get("Content-Type"); ct != "" {
		env = append(env, "CONTENT_TYPE="+ct)
	}
	env = append(env, sandbox.BaseEnv()...) // PATH, TZ, LANG: nothing else of ews's own
	if h.user != nil {
		if u := h.user(r); u != "" {
			env = append(env, "REMOTE_USER="+u, "EWS_USER="+u)
		}
	}
	if h.devices != nil {
		// Linux refuses an environment string over 128 KiB (E2BIG)
		if b, err := json.Marshal(h.devices()); err == nil && len(b) <= maxDevicesEnv {
			env = append(env, "EWS_DEVICES="+string(b))
		} else {
			h.log.Warn("cgi: device list too big for EWS_DEVICES; left out", "bytes", len(b), "err", err)
		}
	}
	return env
}

// envName maps a header name to its meta-variable's: upper case, - to _,
// anything else not a letter or digit to _.
func envName(r rune) rune {
	switch {
	case r >= 'a' && r <= 'z':
		return r - ('a' - 'A')
	case r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return r
	}
	return '_'
}
