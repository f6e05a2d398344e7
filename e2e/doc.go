// Package e2e holds the process-level tests: they build the ews binary once and run real boards.
package e2e
