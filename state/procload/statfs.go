package procload

import (
	"fmt"
	"syscall"
)

// diskUsed is the share of root's file system space in use, as df counts
// it: 1 - available/(used + available); 0 when root is "" (not sampled).
func diskUsed(root string) (float64, error) {
	if root == "" {
		return 0, nil
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(root, &st); err != nil {
		return 0, fmt.Errorf("procload: statfs %q: %w", root, err)
	}
	used := float64(st.Blocks - st.Bfree)
	avail := float64(st.Bavail)
	if used+avail <= 0 {
		return 0, fmt.Errorf("procload: statfs %q: no blocks", root)
	}
	return used / (used + avail), nil
}
