//go:build !unix

package config

import "io/fs"

// groupName is unknown where files have no Unix group.
func groupName(fs.FileInfo) string { return "" }
