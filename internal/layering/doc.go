// Package layering holds the test that the import direction written in docs/architecture.md's Layout section holds.
package layering
