// Package e2e holds the process-level tests: they build the ews binary once and run real boards.
package e2e

// The helpers every test here shares, one file each:
//
//	binary_test.go  building ews (once per flavour per run)
//	ports_test.go   free loopback ports for a layout of boards
//	config_test.go  writing the boards' configs (boardTOML), demo boards
//	board_test.go   one `ews run` process: start, kill -9, its log
//	ask_test.go     asking boards: /api/cluster, agreement, /metrics, waiting for an answer
//
// The browser tests (-tags browser) add a tab helper in browser_e2e_test.go and use
// internal/testbrowser for chromium and its console.
