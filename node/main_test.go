package node

import (
	"os"
	"testing"

	"github.com/ews-firmware/ews/node/bootconf"
)

// TestMain keeps the tests' boards off the machine's /var/lib/ews: with it
// present they took its users store (a token refused, found when another
// run had made it) and wrote theirs there.
func TestMain(m *testing.M) {
	bootconf.NoDefaultStateDir = true
	os.Exit(m.Run())
}
