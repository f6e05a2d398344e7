package testutil

import "sync"

// Claims is a set of numbers (loopback ports, blocks of them) a test
// process has handed out, so that tests running at once never draw the
// same one; safe for concurrent use. The zero value is empty.
type Claims struct {
	mu   sync.Mutex
	held map[int]bool
}

// Claim takes n and reports whether it was free.
func (c *Claims) Claim(n int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[n] {
		return false
	}
	if c.held == nil {
		c.held = map[int]bool{}
	}
	c.held[n] = true
	return true
}

// Release gives n back.
func (c *Claims) Release(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.held, n)
}
