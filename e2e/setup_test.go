package e2e

import "testing"

// beside starts a test that only waits on its own boards: it runs beside
// the others (t.Parallel, doc.go) and is skipped under -short, saying
// why (what it starts).
func beside(t *testing.T, why string) {
	t.Helper()
	t.Parallel()
	long(t, why)
}

// long skips t under -short, saying why (what it starts or builds); a
// serial test calls it, a parallel one beside.
func long(t *testing.T, why string) {
	t.Helper()
	if testing.Short() {
		t.Skip(why)
	}
}

// startCluster is the cluster most tests run: n boards on free loopback
// ports (layout), configured by c (which gives them one key) and each
// started as its own `ews run` of the shipped binary; it does not wait
// for them (waitRunning, waitAgree).
func (c boardTOML) startCluster(t *testing.T, n int) []*board {
	t.Helper()
	boards, _ := layout(t, n)
	c.write(t, boards)
	startAll(t, ewsBinary(t), boards)
	return boards
}
