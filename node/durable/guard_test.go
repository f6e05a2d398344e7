package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// A guard refuses an entry on every board that applies it: the document,
// its watchers and its version stay; the index still advances (issue 50:
// a board's forged write was applied everywhere).
func TestGuardRefusesAtApply(t *testing.T) {
	f := NewFSM(testutil.Logger())
	var seen []string
	f.Watch(KindConfig, func(d Document) { seen = append(seen, string(d.Data)) })
	f.Guard(KindConfig, func(_ Document, data []byte) error {
		if strings.Contains(string(data), "forged") {
			return errors.New("not signed")
		}
		return nil
	})
	if res := f.Apply(entry(t, 1, KindConfig, "good", 0)).(applyResult); res.err != nil || res.version != 1 {
		t.Fatalf("good: %+v", res)
	}
	res := f.Apply(entry(t, 2, KindConfig, "forged", 1)).(applyResult)
	if !IsRefused(res.err) {
		t.Fatalf("forged: %+v, want refused", res)
	}
	if d := f.Get(KindConfig); d.Version != 1 || string(d.Data) != "good" || f.Index() != 2 || len(seen) != 1 {
		t.Errorf("after the refusal: %+v, index %d, watchers saw %v", d, f.Index(), seen)
	}
	// a snapshot is checked the same way: refused, this board keeps its own
	var snap bytes.Buffer
	_ = json.NewEncoder(&snap).Encode(snapshotDocs{V: commandVersion, Docs: map[string]Document{KindConfig: {Version: 7, Data: []byte("forged")}}})
	if err := f.Restore(io.NopCloser(&snap)); !errors.Is(err, ErrSnapshotRefused) {
		t.Fatalf("restore of a forged snapshot: %v, want refused", err)
	}
	if d := f.Get(KindConfig); d.Version != 1 || string(d.Data) != "good" {
		t.Errorf("a forged snapshot was taken: %+v", d)
	}
}

// The forward route takes only the log's kinds, and answers a guard's
// refusal with 403 before anything is proposed.
func TestForwardRefuses(t *testing.T) {
	r := &Raft{fsm: NewFSM(testutil.Logger())}
	h := r.ForwardHandler()
	for _, c := range []struct {
		name, kind string
		code       int
	}{
		{"a made-up kind", "admins", http.StatusForbidden},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd, _ := encodeCommand(context.Background(), c.kind, []byte("x"), 0)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, httptest.NewRequest(http.MethodPost, ForwardPath, bytes.NewReader(cmd)))
			var a forwardAnswer
			if w.Code != c.code || json.Unmarshal(w.Body.Bytes(), &a) != nil || a.Refused != c.kind {
				t.Errorf("%d %s, want %d and refused %q", w.Code, w.Body, c.code, c.kind)
			}
		})
	}
}
