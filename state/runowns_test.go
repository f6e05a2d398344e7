package state

import (
	"bytes"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// loops are the goroutines Run starts, by their function.
var loops = []string{
	"state.(*Cluster).run(",
	"state.(*Cluster).rejoin(",
	"state.(*Cluster).introLoop(",
	"state.(*Cluster).askLoop(",
	"state.(*countingTransport).filterPackets(",
}

// running counts the goroutines in each of loops.
func running(t *testing.T) map[string]int {
	t.Helper()
	var buf bytes.Buffer
	if err := pprof.Lookup("goroutine").WriteTo(&buf, 2); err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, g := range strings.Split(buf.String(), "\n\n") {
		for _, l := range loops {
			if strings.Contains(g, l) {
				n[l]++
			}
		}
	}
	return n
}

// TestRunOwnsItsGoroutines: Run starts the protocol's loop, the re-joins,
// the intro and ask loops of a signing board and the transport's filter,
// and each has returned by the time Run does (docs/DESIGN.md, Wiring).
func TestRunOwnsItsGoroutines(t *testing.T) {
	ca := clusterCA(t, "main")
	bs := signedBoards(t, loopbackPeers(t, 2), ca.ids)
	testutil.EventuallyWithin(t, "ews1 master, both boards signing", 10*time.Second, func() bool {
		return oneMaster(bs, "ews1") && everyoneSigns(bs)
	})
	during := running(t)
	for _, l := range loops {
		if during[l] < len(bs) {
			t.Fatalf("%d goroutines in %s while %d boards run, want one each", during[l], l, len(bs))
		}
	}
	for _, b := range bs {
		b.c.stop()
	}
	if after := running(t); len(after) != 0 {
		t.Fatalf("goroutines left once Run returned: %v", after)
	}
}
