//go:build unix

package config

import (
	"io/fs"
	"os/user"
	"strconv"
	"syscall"
)

// groupName is the name of the file's group, or its id when unnamed.
func groupName(fi fs.FileInfo) string {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return ""
	}
	id := strconv.FormatUint(uint64(st.Gid), 10)
	if g, err := user.LookupGroupId(id); err == nil {
		return g.Name
	}
	return id
}
