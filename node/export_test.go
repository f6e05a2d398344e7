package node

import "net/http"

// withRoute mounts an extra handler, so tests can hold a request in flight.
func withRoute(pattern string, h http.Handler) Option {
	return func(n *Node) {
		if n.extraRoutes == nil {
			n.extraRoutes = map[string]http.Handler{}
		}
		n.extraRoutes[pattern] = h
	}
}

// withTimeouts overrides DefaultTimeouts with short ones.
func withTimeouts(t Timeouts) Option { return func(n *Node) { n.timeouts = t } }
