package node

import "os"

// stateDir is where a board keeps what it needs across restarts (history,
// users store, saved outputs, logouts): [node] state_dir when the config
// names it, or, naming none, the default /var/lib/ews on real hardware when
// it exists (the package creates it). "" otherwise (a simulated board, a
// dev machine, tests): the demo and tests never write /var/lib/ews.
func (n *Node) stateDir() string { return n.boot.stateDirPath() }

// stateDirPath is Node.stateDir, for the config mapping before the Node.
func (b *boot) stateDirPath() string {
	dir := b.stateDir
	if dir == "" {
		return ""
	}
	if b.stateDirSet {
		return dir
	}
	if fi, err := os.Stat(dir); err == nil && fi.IsDir() && !b.simulated {
		return dir
	}
	return ""
}
