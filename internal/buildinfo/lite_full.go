//go:build !lite

package buildinfo

// Lite is true in the lite build (go build -tags lite): the small boards'
// build that leaves out what they can live without (docs/NOTES.md "The lite build").
const Lite = false
