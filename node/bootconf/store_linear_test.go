package bootconf

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// A board's own section in a document is named with its line, however
// it is written, and a key written twice with its first line.
func TestTopLines(t *testing.T) {
	doc := "[[device]]\nname = \"a\"\n\n  [ node ]\nname = \"x\"\n[[cluster.peers]]\n\thttp = 1\nhttp=2\n[cluster]\n[\"quoted\"]\nkey.dotted = 1\n"
	want := map[string]int{"device": 1, "name": 2, "node": 4, "cluster": 6, "http": 7, "key.dotted": 11}
	got := topLines([]byte(doc))
	for k, line := range want {
		if got[k] != line {
			t.Errorf("line of %q = %d, want %d", k, got[k], line)
		}
	}
	if _, ok := got[`"quoted"`]; !ok {
		t.Errorf("a quoted table name is kept as written: %v", got)
	}
}

// The check of a PUT /api/config document stays linear in its size:
// 1 MiB of unknown top-level keys is one problem (a table past
// config.MaxTableKeys) well within 30 s. It named each key's line with a
// regular expression compiled and run over the whole text per key: 10 s
// on 250 KB, minutes on this.
func TestCheckStoreLinear(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "unknown_key_%07d = 1\n", i)
	}
	check := CheckStore([]byte("[node]\nname = \"ews1\"\n"))
	done := make(chan struct{})
	var n int
	var first string
	go func() {
		defer close(done)
		ps := check([]byte(b.String()))
		n = len(ps)
		if n > 0 {
			first = ps[0].Text
		}
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("not done within 30s: the store's check is not linear in the document's size")
	}
	if n != 1 || !strings.Contains(first, "cluster.toml:1025:1") || !strings.Contains(first, "more than 1024 keys") {
		t.Errorf("%d problems, the first %q; want one naming line 1025", n, first)
	}
}
