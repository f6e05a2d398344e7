// Package dispatch is the HTTP layer between clients, the master's dispatcher and the boards: signed via, dispatch and redirect marks, the Front handler that holds, hands to the master, admits, forwards or redirects each request, and the master's board connections.
package dispatch
