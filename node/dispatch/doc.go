// Package dispatch is every board's front door: the request pipeline (pipeline.go: accept, authenticate once, classify, then the master's, a follower's or a marked request's path), the signed marks, the retry rule and the forwarding transport.
package dispatch
