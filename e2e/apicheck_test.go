package e2e

import (
	"net/http"

	"github.com/ews-firmware/ews/internal/testkit/apicheck"
)

// apiProblems are the answers, received by the e2e clients, that
// docs/openapi.yaml does not allow; TestMain fails the run on any.
var apiProblems apicheck.Problems

// checked is base (http.DefaultTransport when nil) with every answer held
// to docs/openapi.yaml. The clients that ask boards what they are (board.do,
// viewAt, info, the TLS clusters' client) use it; the load generators do not.
func checked(base http.RoundTripper) http.RoundTripper {
	return &apicheck.Transport{Base: base, Report: apiProblems.Add}
}

// unchecked is the plain transport under rt (checked's base): load loops
// send thousands of requests on routes the other tests check already.
func unchecked(rt http.RoundTripper) *http.Transport {
	if c, ok := rt.(*apicheck.Transport); ok {
		rt = c.Base
	}
	if t, ok := rt.(*http.Transport); ok {
		return t
	}
	return http.DefaultTransport.(*http.Transport)
}
