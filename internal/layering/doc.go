// Package layering holds the test that the import direction written in the README's Layout section holds.
package layering
