package history

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func testHandler(t *testing.T) (*http.ServeMux, *testutil.Clock) {
	c := newClock()
	s := openStore(t, t.TempDir(), c)
	for i := range 5 {
		s.Record("temp1", "°C", 20+float64(i))
		c.Add(5 * time.Second)
	}
	devs := map[string]hal.Snapshot{
		"temp1": {Name: "temp1", Node: "ews1", State: hal.StateOK, Value: 24.0, Unit: "°C"},
		// the mirror marks a dead board's device "error" and keeps its value
		"temp9":  {Name: "temp9", Node: "ews2", State: hal.StateError, Error: "board ews2 unreachable", Value: 7.5, Unit: "°C", Updated: c.Now().Add(-time.Minute)},
		"relay1": {Name: "relay1", Node: "ews1", State: hal.StateOff, Value: false},
	}
	h := NewHandler(HandlerOptions{Store: s, Now: c.Now,
		Lookup: func(n string) (hal.Snapshot, bool) { d, ok := devs[n]; return d, ok },
		Local:  func(n string) bool { return devs[n].Node == "ews1" },
	})
	mux := http.NewServeMux()
	h.Register(mux, nil)
	return mux, c
}

func get(mux http.Handler, url string) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest("GET", url, nil))
	return w
}

func TestHandlerErrors(t *testing.T) {
	mux, _ := testHandler(t)
	cases := []struct {
		url    string
		status int
		want   string
	}{
		{"/api/devices/temp1/history?since=tomorrow", 400, "neither a duration"},
		{"/api/devices/temp1/history?since=2099-01-01T00:00:00Z", 400, "in the future"},
		{"/api/devices/temp1/history?since=-1h", 400, "negative"},
		{"/api/devices/temp1/history?since=1h&until=2h", 400, "before since"},
		{"/api/devices/temp1/history?step=0s", 400, "positive duration"},
		{"/api/devices/temp1/history?format=xml", 400, "json or csv"},
		{"/api/devices/nope/history", 404, "not found"},
	}
	for _, tc := range cases {
		t.Run(tc.url, func(t *testing.T) {
			w := get(mux, tc.url)
			var body struct{ Error string }
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
				t.Fatalf("not JSON: %q", w.Body)
			}
			if w.Code != tc.status || !strings.Contains(body.Error, tc.want) {
				t.Fatalf("%d %q, want %d containing %q", w.Code, body.Error, tc.status, tc.want)
			}
		})
	}
}

func TestHandlerPoints(t *testing.T) {
	mux, _ := testHandler(t)
	w := get(mux, "/api/devices/temp1/history?since=1h")
	var s Series
	if err := json.Unmarshal(w.Body.Bytes(), &s); err != nil || w.Code != 200 {
		t.Fatalf("%d %s", w.Code, w.Body)
	}
	if s.Name != "temp1" || s.Unit != "°C" || len(s.Points) != 5 || s.Points[4].V != 24 || s.Step != "" {
		t.Fatalf("got %+v", s)
	}
	w = get(mux, "/api/devices/temp1/history?since=1h&step=1h")
	s = Series{}
	_ = json.Unmarshal(w.Body.Bytes(), &s)
	if len(s.Points) != 1 || *s.Points[0].Min != 20 || *s.Points[0].Max != 24 || *s.Points[0].Mean != 22 {
		t.Fatalf("downsampled: %s", w.Body)
	}
	// a device that never changed: empty points, not an error
	w = get(mux, "/api/devices/relay1/history")
	if w.Code != 200 || !strings.Contains(w.Body.String(), `"points":[]`) {
		t.Fatalf("relay1: %d %s", w.Code, w.Body)
	}
}

// TestHandlerCSVMatchesJSON: the CSV holds the same points as the JSON.
func TestHandlerCSVMatchesJSON(t *testing.T) {
	mux, _ := testHandler(t)
	for _, q := range []string{"since=1h", "since=1h&step=10s"} {
		var s Series
		_ = json.Unmarshal(get(mux, "/api/devices/temp1/history?"+q).Body.Bytes(), &s)
		w := get(mux, "/api/devices/temp1/history?format=csv&"+q)
		if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
			t.Fatalf("content type %q", ct)
		}
		rows, err := csv.NewReader(w.Body).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(s.Points)+1 {
			t.Fatalf("%s: %d rows for %d points", q, len(rows), len(s.Points))
		}
		for i, p := range s.Points {
			ts, _ := time.Parse(time.RFC3339Nano, rows[i+1][0])
			v, _ := strconv.ParseFloat(rows[i+1][1], 64)
			if !ts.Equal(p.T) || v != p.V {
				t.Fatalf("%s row %d = %v, point %+v", q, i, rows[i+1], p)
			}
		}
	}
}

// TestHandlerDeadBoard: another board's device reaches this board only when
// its board is down: the mirror's last value, 503 and Retry-After.
func TestHandlerDeadBoard(t *testing.T) {
	mux, _ := testHandler(t)
	w := get(mux, "/api/devices/temp9/history")
	var body struct {
		Series
		Error string
	}
	_ = json.Unmarshal(w.Body.Bytes(), &body)
	if w.Code != 503 || w.Header().Get("Retry-After") == "" || body.Error == "" {
		t.Fatalf("%d %v %s", w.Code, w.Header(), w.Body)
	}
	if len(body.Points) != 1 || body.Points[0].V != 7.5 {
		t.Fatalf("want the mirror's last value 7.5: %s", w.Body)
	}
}

func TestPin(t *testing.T) {
	next := func(r *http.Request) string { return "ews2" }
	running := map[string]bool{"ews2": false}
	pin := Pin(next, func(b string) bool { return running[b] })
	for _, tc := range []struct {
		method, path string
		up           bool
		want         string
	}{
		{"GET", "/api/devices/t/history", false, ""},
		{"GET", "/api/devices/t/history", true, "ews2"},
		{"GET", "/api/devices/t", false, "ews2"},
		{"POST", "/api/devices/t/read", false, "ews2"},
	} {
		running["ews2"] = tc.up
		if got := pin(httptest.NewRequest(tc.method, tc.path, nil)); got != tc.want {
			t.Errorf("%s %s up=%v: %q, want %q", tc.method, tc.path, tc.up, got, tc.want)
		}
	}
}

func TestValue(t *testing.T) {
	for _, tc := range []struct {
		s  hal.Snapshot
		v  float64
		ok bool
	}{
		{hal.Snapshot{State: hal.StateOK, Value: 21.5}, 21.5, true},
		{hal.Snapshot{State: hal.StateOn, Value: true}, 1, true},
		{hal.Snapshot{State: hal.StateOff, Value: false}, 0, true},
		{hal.Snapshot{State: hal.StateOn, Value: 0.4}, 0.4, true},
		{hal.Snapshot{State: hal.StateError, Value: 3.0}, 0, false},
		{hal.Snapshot{State: hal.StateUnknown}, 0, false},
		{hal.Snapshot{State: hal.StateOK, Value: "text"}, 0, false},
	} {
		if v, ok := Value(tc.s); v != tc.v || ok != tc.ok {
			t.Errorf("Value(%+v) = %v %v, want %v %v", tc.s, v, ok, tc.v, tc.ok)
		}
	}
}
