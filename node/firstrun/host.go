package firstrun

import (
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// hosts is the names the page answers to: an IP literal, localhost, the
// board's hostname and NAME.local, and the names in Options.Hosts. A page
// reached under any other name is a DNS rebinding (a site of the
// attacker's resolving to the board), which the browser would otherwise
// take for the same origin; it is refused.
type hosts map[string]bool

func newHosts(hostname string, extra []string) hosts {
	h := hosts{"localhost": true}
	for _, n := range append([]string{hostname}, extra...) {
		n = canonHost(n)
		if n == "" {
			continue
		}
		h[n] = true
		if !strings.Contains(n, ".") {
			h[n+".local"] = true
		}
	}
	return h
}

// canonHost is a name lower-cased without its trailing dot.
func canonHost(n string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(n)), ".")
}

// allowed says whether a Host header (or an Origin's host) names this board.
func (h hosts) allowed(hostport string) bool {
	host := hostport
	if hh, _, err := net.SplitHostPort(hostport); err == nil {
		host = hh
	}
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if host == "" {
		return false
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	return h[canonHost(host)]
}

// allowedOrigin says whether an Origin header, when sent, is this board.
func (h hosts) allowedOrigin(origin string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return h.allowed(u.Host)
}

// sameSite says whether a POST with these Origin and Sec-Fetch-Site
// headers comes from this board's own page. "Origin: null" (what a browser
// sends for a form under Referrer-Policy: no-referrer, or from a sandboxed
// or file: page) passes only when the browser says same-origin.
func (h hosts) sameSite(origin, fetchSite string) bool {
	switch {
	case fetchSite == "cross-site" || fetchSite == "same-site":
		return false
	case origin == "null":
		return fetchSite == "same-origin"
	}
	return h.allowedOrigin(origin)
}
