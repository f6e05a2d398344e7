// Package dispatch is every board's front door: the request pipeline (pipeline.go: accept, authenticate once, read the body once, classify), the one forwarding loop and its Placers (loop.go, placer.go), the signed via, dispatch and redirect marks, the retry rule and the pooled board connections.
package dispatch
