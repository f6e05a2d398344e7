// Package dispatch is every board's front door: the request pipeline (pipeline.go: accept, authenticate once, classify, then the master's, a follower's or a marked request's path), the signed via, dispatch and redirect marks, the retry rule and the master's pooled board connections.
package dispatch
