package confstore

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/node/durable"
)

// bigConfig is a valid document of about size bytes: devices, the edit
// number in a comment.
func bigConfig(size, edit int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# edit %d\n", edit)
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "[[device]]\nname = \"relay%05d\"\ndriver = \"sim-switch\"\n", i)
	}
	return b.String()
}

// The budget stays under the durable log's own cap on a document.
func TestBudgetUnderTheLogsCap(t *testing.T) {
	if _, err := durable.NewAlone(nil).Apply(context.Background(), durable.KindConfig, make([]byte, MaxStored), 0); err != nil {
		t.Fatalf("the log refuses a document of MaxStored bytes: %v", err)
	}
}

// 40 edits of a 200 KiB config all commit, the history keeping what fits:
// the document stays under the budget. With versions bounded by count
// alone, the fifth edit passed the log's 1 MiB and every write after it
// answered 500.
func TestManyLargeEdits(t *testing.T) {
	st := durable.NewAlone(nil)
	s := fixture(t, Options{State: st, Check: func([]byte) []Problem { return nil }})
	h := server(s)
	for edit := 1; edit <= 40; edit++ {
		cur, _ := s.Current()
		w := do(h, "PUT", "/api/config", "admin", etag(cur.Number), bigConfig(200<<10, edit))
		if w.Code != 200 {
			t.Fatalf("edit %d: %d %s", edit, w.Code, w.Body)
		}
		if n := len(st.Get(durable.KindConfig).Data); n > MaxStored {
			t.Fatalf("edit %d: the document is %d bytes, over %d", edit, n, MaxStored)
		}
	}
	hist := s.History()
	if cur, _ := s.Current(); cur.Number != 41 || !strings.HasPrefix(cur.Text, "# edit 40\n") {
		t.Fatalf("current %d %.12q", cur.Number, cur.Text)
	}
	if len(hist) < 2 || len(hist) > 4 || hist[len(hist)-1].Number != 41 {
		t.Errorf("history keeps %d versions (%d..), want the newest that fit", len(hist), hist[0].Number)
	}
	// the history lists what is kept; a rollback to a dropped version is
	// gone (410), to one kept works
	w := do(h, "GET", "/api/config/history", "admin", "", "")
	if w.Code != 200 || strings.Count(w.Body.String(), `"version":`) != len(hist) {
		t.Errorf("history: %d, %d versions listed, want %d", w.Code, strings.Count(w.Body.String(), `"version":`), len(hist))
	}
	if w := do(h, "POST", "/api/config/rollback?to=2", "admin", "", ""); w.Code != 410 || !strings.Contains(w.Body.String(), "no longer kept") {
		t.Errorf("rollback to a dropped version: %d %s", w.Code, w.Body)
	}
	if w := do(h, "POST", "/api/config/rollback?to=99", "admin", "", ""); w.Code != 404 {
		t.Errorf("rollback to a version never made: %d %s", w.Code, w.Body)
	}
	if w := do(h, "POST", fmt.Sprintf("/api/config/rollback?to=%d", hist[0].Number), "admin", "", ""); w.Code != 200 {
		t.Errorf("rollback to the oldest kept: %d %s", w.Code, w.Body)
	}
}

// A version that does not fit the log even alone is refused with 413
// before anything is committed; the store is unchanged.
func TestOversizePut(t *testing.T) {
	st := durable.NewAlone(nil)
	s := fixture(t, Options{State: st})
	h := server(s)
	// within the 256 KiB body, but each '<' encodes to 6 bytes of JSON
	body := seed + "# " + strings.Repeat("<", 200<<10) + "\n"
	w := do(h, "PUT", "/api/config", "admin", `"1"`, body)
	if w.Code != 413 || !strings.Contains(w.Body.String(), `"error":"confstore: the configuration encodes to`) {
		t.Fatalf("oversize put: %d %s", w.Code, w.Body)
	}
	if v, _ := s.Current(); v.Number != 1 || v.Text != seed || st.Get(durable.KindConfig).Version != 1 {
		t.Errorf("a refused write changed the store: %+v", v)
	}
}

// The history is bounded in bytes: 1 KiB versions in a 4 KiB budget keep
// the newest three.
func TestHistoryBoundInBytes(t *testing.T) {
	s := fixture(t, Options{Budget: 4 << 10, Check: func([]byte) []Problem { return nil }})
	for n := uint64(1); n <= 5; n++ {
		if _, err := s.Put(context.Background(), []byte(bigConfig(1<<10, int(n))), n, "admin", ""); err != nil {
			t.Fatal(err)
		}
	}
	if h := s.History(); len(h) != 3 || h[2].Number != 6 {
		t.Errorf("history of 1 KiB versions in 4 KiB: %d versions", len(h))
	}
}
