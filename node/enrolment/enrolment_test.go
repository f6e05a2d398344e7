package enrolment

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/enrol"
)

// A sealed bundle left by the admin is fetched once by its id, then gone;
// it expires; bad bodies, duplicates and a full board are refused.
func TestLeaveFetch(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	m := New(Options{Admin: func(h http.Handler) http.Handler { return h }, Peers: func() []string { return []string{"ews1=10.0.0.1:7946"} },
		Now: func() time.Time { return now }})
	mux := http.NewServeMux()
	m.Routes(mux)
	do := func(method, path, body string) (int, Answer) {
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(method, path, strings.NewReader(body)))
		var a Answer
		_ = json.Unmarshal(w.Body.Bytes(), &a)
		return w.Code, a
	}
	code, _ := enrol.NewCode()
	id, sealed, err := enrol.Seal(code, []byte("bundle"))
	if err != nil {
		t.Fatal(err)
	}
	leave := func(id, sealed string, ttl int) int {
		b, _ := json.Marshal(Request{ID: id, Sealed: sealed, TTL: ttl})
		c, _ := do("POST", Path, string(b))
		return c
	}
	w := httptest.NewRecorder()
	b, _ := json.Marshal(Request{ID: id, Sealed: sealed, Name: "ews4"})
	mux.ServeHTTP(w, httptest.NewRequest("POST", Path, strings.NewReader(string(b))))
	if w.Code != http.StatusCreated || w.Header().Get(HeaderName) != "ews4 "+id[:8] {
		t.Fatalf("leave: %d, %s %q", w.Code, HeaderName, w.Header().Get(HeaderName))
	}
	// the admin's list names it, with no sealed text
	w = httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", Path, nil))
	var l List
	if err := json.Unmarshal(w.Body.Bytes(), &l); err != nil || w.Code != http.StatusOK || len(l.Pending) != 1 ||
		l.Pending[0] != (Pending{ID: id, Name: "ews4", Expires: now.Add(DefaultTTL)}) || strings.Contains(w.Body.String(), sealed) {
		t.Fatalf("list: %d %s", w.Code, w.Body)
	}
	for _, bad := range []struct {
		name string
		code int
		body string
	}{
		{"the same id again", http.StatusConflict, `{"id":"` + id + `","sealed":"x"}`},
		{"not an id", http.StatusBadRequest, `{"id":"nope","sealed":"x"}`},
		{"nothing sealed", http.StatusBadRequest, `{"id":"` + strings.Repeat("a", enrol.IDLen) + `"}`},
		{"a bad name", http.StatusBadRequest, `{"id":"` + strings.Repeat("a", enrol.IDLen) + `","sealed":"x","name":"EWS 4"}`},
		{"an unknown field", http.StatusBadRequest, `{"id":"` + strings.Repeat("a", enrol.IDLen) + `","sealed":"x","code":"the code!"}`},
		{"too large", http.StatusBadRequest, `{"id":"` + strings.Repeat("b", enrol.IDLen) + `","sealed":"` + strings.Repeat("A", enrol.MaxSealed+1) + `"}`},
	} {
		if c, _ := do("POST", Path, bad.body); c != bad.code {
			t.Errorf("%s: %d, want %d", bad.name, c, bad.code)
		}
	}
	c, a := do("GET", Path+"/"+id, "")
	if c != http.StatusOK || a.Sealed != sealed || len(a.Peers) != 1 {
		t.Fatalf("fetch: %d %+v", c, a)
	}
	if got, err := enrol.Open(code, a.Sealed); err != nil || string(got) != "bundle" {
		t.Fatalf("open: %q %v", got, err)
	}
	if c, _ := do("GET", Path+"/"+id, ""); c != http.StatusNotFound {
		t.Fatalf("a second fetch: %d, want 404 (once)", c)
	}
	w = httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", Path, nil))
	if !strings.Contains(w.Body.String(), `"pending":[]`) {
		t.Fatalf("the list after the fetch: %s, want none pending", w.Body)
	}
	// an enrolment expires
	other := strings.Repeat("c", enrol.IDLen)
	if c := leave(other, sealed, 60); c != http.StatusCreated {
		t.Fatalf("leave: %d", c)
	}
	now = now.Add(61 * time.Second)
	if c, _ := do("GET", Path+"/"+other, ""); c != http.StatusNotFound {
		t.Fatalf("an expired enrolment: %d, want 404", c)
	}
	// a board keeps at most MaxPending
	for i := range MaxPending {
		id := strings.Repeat("d", enrol.IDLen-2) + string("0123456789abcdef"[i/16]) + string("0123456789abcdef"[i%16])
		if c := leave(id, sealed, 0); c != http.StatusCreated {
			t.Fatalf("leave %d: %d", i, c)
		}
	}
	if c := leave(strings.Repeat("e", enrol.IDLen), sealed, 0); c != http.StatusConflict {
		t.Fatalf("one past MaxPending: %d, want 409", c)
	}
}
