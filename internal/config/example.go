package config

import (
	"crypto/rand"
	_ "embed"
	"encoding/base64"
	"strings"
)

//go:embed example.toml
var example string

// Example returns the annotated example config with a freshly generated key
// and, in the comment of sched.policy, the policies given (the scheduler's
// registered names: sched.PolicyNames).
func Example(policies ...string) string {
	s := strings.Replace(example, "@KEY@", NewKey(), 1)
	return strings.Replace(s, "@POLICIES@", strings.Join(policies, " "), 1)
}

// NewKey returns a random base64 AES-256 key.
func NewKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails since Go 1.24
	return base64.StdEncoding.EncodeToString(b)
}
