package cgi

import "net/http"

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
