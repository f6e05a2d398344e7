package node

import (
	"net/http"

	"github.com/ews-firmware/ews/node/listen"
)

// withRoute mounts an extra handler, so tests can hold a request in flight.
func withRoute(pattern string, h http.Handler) Option {
	return func(s *settings) {
		if s.routes == nil {
			s.routes = map[string]http.Handler{}
		}
		s.routes[pattern] = h
	}
}

// withTimeouts overrides DefaultTimeouts with short ones.
func withTimeouts(t listen.Timeouts) Option { return func(s *settings) { s.timeouts = t } }
