package node

import (
	"os"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/bootconf"
)

// TestMain keeps the tests' boards off the machine's /var/lib/ews: with it
// present they took its users store (a token refused, found when another
// run had made it) and wrote theirs there.
func TestMain(m *testing.M) {
	bootconf.NoDefaultStateDir = true
	os.Exit(m.Run())
}

// bootOf maps cfg as New does (node/bootconf), failing the test on an error.
func bootOf(t *testing.T, cfg *config.Config) *bootconf.Boot {
	t.Helper()
	b, err := bootconf.Map(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
