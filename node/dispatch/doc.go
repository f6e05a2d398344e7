// Package dispatch is the HTTP layer between clients, the master's dispatcher and the boards: signed dispatch marks, the Front handler that forwards, proxies or redirects each request, and the table-to-dispatcher adapter.
package dispatch
