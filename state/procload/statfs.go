package procload

import "syscall"

// diskUsed is the share of root's file system space in use, as df counts
// it: 1 - available/(used + available); 0 when root is "" or unreadable.
func diskUsed(root string) float64 {
	if root == "" {
		return 0
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(root, &st); err != nil {
		return 0
	}
	used := float64(st.Blocks - st.Bfree)
	avail := float64(st.Bavail)
	if used+avail <= 0 {
		return 0
	}
	return used / (used + avail)
}
