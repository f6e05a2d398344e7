package devapi

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/httpx"
	"github.com/ews-firmware/ews/node/auth"
)

const token = "tok"

// board is ews1 of a two-board cluster with a simulated board's devices;
// "far" is wired to ews2.
func board() hal.Config {
	return hal.Config{Node: "ews1", Sim: &hal.SimConfig{}, Devices: []hal.DeviceSpec{
		{Name: "relay1", Driver: "gpio-out", Pin: "GPIO17", Interlock: []string{"relay2"}},
		{Name: "relay2", Driver: "gpio-out", Pin: "GPIO27"},
		{Name: "led", Driver: "pwm", Pin: "GPIO18"},
		{Name: "temp", Driver: "sim-sensor"},
		{Name: "broken", Driver: "command", Command: []string{"sh", "-c", "echo bus NACK >&2; exit 1"}},
		{Name: "far", Driver: "gpio-out", Pin: "GPIO5", Node: "ews2"},
	}}
}

// creds are the board's credentials: auth = "token", token = "tok".
var creds = auth.Config{Mode: auth.ModeToken, Token: token}

type fixture struct {
	mux   *http.ServeMux
	devs  *hal.Devices
	board *hal.SimBoard
	api   *API
}

func newFixture(t testing.TB, opts Options) *fixture {
	t.Helper()
	sim := hal.NewSimBoard()
	devs, err := hal.New(board(), hal.Options{Board: sim})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = devs.Close() })
	a, err := auth.New(creds, auth.Options{})
	if err != nil {
		t.Fatal(err)
	}
	api := New(devs, a, opts)
	mux := http.NewServeMux()
	api.Register(mux)
	return &fixture{mux: mux, devs: devs, board: sim, api: api}
}

func (f *fixture) do(method, target, tok string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, nil)
	if tok != "" {
		r.Header.Set("Authorization", "Bearer "+tok)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	f.mux.ServeHTTP(w, r)
	return w
}

func TestAPI(t *testing.T) {
	f := newFixture(t, Options{})
	tests := []struct {
		name      string
		method    string
		target    string
		tok       string
		want      int
		bodyParts []string
		relay1Pin bool // GPIO17 level after the request
	}{
		{"list", "GET", "/api/devices", "", 200, []string{`"name":"relay1"`, `"node":"ews2"`, `"state":"remote"`}, false},
		{"get", "GET", "/api/devices/temp", "", 200, []string{`"name":"temp"`, `"driver":"sim-sensor"`, `"unit":"°C"`, `"updated"`}, false},
		{"get unknown", "GET", "/api/devices/ghost", "", 404, []string{`"error"`, "ghost"}, false},
		{"get remote", "GET", "/api/devices/far", "", 409, []string{"far", `"node":"ews2"`}, false},
		{"no token", "POST", "/api/devices/relay1/turn_on", "", 401, []string{`"error"`}, false},
		{"wrong token", "POST", "/api/devices/relay1/turn_on", "nope", 401, []string{`"error"`}, false},
		{"token in query", "POST", "/api/devices/relay1/turn_on?token=tok", "", 401, []string{`"error"`}, false},
		{"unknown device", "POST", "/api/devices/ghost/turn_on", token, 404, []string{"ghost"}, false},
		{"unknown action", "POST", "/api/devices/relay1/explode", token, 400, []string{"relay1", "explode"}, false},
		{"value not a number", "POST", "/api/devices/led/set?value=abc", token, 400, []string{"led", "abc"}, false},
		{"value missing", "POST", "/api/devices/led/set", token, 400, []string{"led"}, false},
		{"value NaN", "POST", "/api/devices/led/set?value=NaN", token, 400, []string{"led"}, false},
		{"value out of range", "POST", "/api/devices/led/set?value=150", token, 400, []string{"led", "150"}, false},
		{"pulse zero", "POST", "/api/devices/relay1/pulse?ms=0", token, 400, []string{"relay1"}, false},
		{"pulse too long", "POST", "/api/devices/relay1/pulse?ms=99999999", token, 400, []string{"relay1"}, false},
		{"unsupported", "POST", "/api/devices/temp/turn_on", token, 405, []string{"temp", "turn_on"}, false},
		{"remote", "POST", "/api/devices/far/turn_on", token, 409, []string{"far", "ews2"}, false},
		{"driver failure", "POST", "/api/devices/broken/read", token, 502, []string{"broken", "bus NACK"}, false},
		{"turn on", "POST", "/api/devices/relay1/turn_on", token, 200, []string{`"state":"on"`, `"value":true`}, true},
		{"set pwm", "POST", "/api/devices/led/set?value=42.5", token, 200, []string{`"value":42.5`, `"unit":"%"`}, true},
		{"read", "POST", "/api/devices/temp/read", token, 200, []string{`"state":"ok"`}, true},
		{"interlock", "POST", "/api/devices/relay2/turn_on", token, 200, []string{`"name":"relay2"`, `"state":"on"`}, false},
		{"broken shows error", "GET", "/api/devices/broken", "", 200, []string{`"state":"error"`, `"error":`, "NACK"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := f.do(tt.method, tt.target, tt.tok)
			if w.Code != tt.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.want, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if !json.Valid(w.Body.Bytes()) {
				t.Errorf("body is not JSON: %s", w.Body)
			}
			for _, p := range tt.bodyParts {
				if !strings.Contains(w.Body.String(), p) {
					t.Errorf("body %s lacks %s", w.Body, p)
				}
			}
			if got := bool(f.board.Pins["GPIO17"].Read()); got != tt.relay1Pin {
				t.Errorf("relay1 pin = %v, want %v", got, tt.relay1Pin)
			}
		})
	}
}

func TestReadAuth(t *testing.T) {
	f := newFixture(t, Options{ReadAuth: true})
	if w := f.do("GET", "/api/devices", ""); w.Code != 401 {
		t.Fatalf("GET without token: %d, want 401", w.Code)
	}
	if w := f.do("GET", "/api/devices/relay1", token); w.Code != 200 {
		t.Fatalf("GET with token: %d", w.Code)
	}
}

// ons counts how often relay1 went on, from the state changes.
func ons(ch <-chan hal.Snapshot) int {
	n := 0
	for {
		select {
		case s := <-ch:
			if s.Name == "relay1" && s.State == hal.StateOn {
				n++
			}
		default:
			return n
		}
	}
}

func TestIdempotency(t *testing.T) {
	f := newFixture(t, Options{})
	ch, cancel := f.devs.Subscribe(1000)
	defer cancel()
	first := f.do("POST", "/api/devices/relay1/pulse?ms=1", token, "Idempotency-Key", "k1")
	again := f.do("POST", "/api/devices/relay1/pulse?ms=1", token, "Idempotency-Key", "k1")
	if first.Code != 200 || again.Code != first.Code || again.Body.String() != first.Body.String() {
		t.Fatalf("replay differs: %d %s vs %d %s", first.Code, first.Body, again.Code, again.Body)
	}
	if again.Header().Get("Idempotent-Replayed") != "true" {
		t.Error("replay not marked")
	}
	if n := ons(ch); n != 1 {
		t.Fatalf("relay pulsed %d times, want 1", n)
	}
	// errors are replayed too, and without a valid token nothing is cached
	if w := f.do("POST", "/api/devices/relay1/pulse?ms=1", "", "Idempotency-Key", "k2"); w.Code != 401 {
		t.Fatalf("no token: %d", w.Code)
	}
	if w := f.do("POST", "/api/devices/relay1/pulse?ms=1", token, "Idempotency-Key", "k2"); w.Code != 200 {
		t.Fatalf("k2 after a 401: %d, want it to run", w.Code)
	}
	// a key reused for another request
	if w := f.do("POST", "/api/devices/relay2/turn_on", token, "Idempotency-Key", "k1"); w.Code != 422 {
		t.Fatalf("key reused for another request: %d, want 422", w.Code)
	}
	// a second key pulses again
	_ = ons(ch)
	f.do("POST", "/api/devices/relay1/pulse?ms=1", token, "Idempotency-Key", "k3")
	if n := ons(ch); n != 1 {
		t.Fatalf("new key pulsed %d times, want 1", n)
	}
}

func TestIdempotencyConcurrent(t *testing.T) {
	f := newFixture(t, Options{})
	ch, cancel := f.devs.Subscribe(1000)
	defer cancel()
	const n = 20
	bodies := make([]string, n)
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := f.do("POST", "/api/devices/relay1/pulse?ms=30", token, "Idempotency-Key", "same")
			bodies[i], codes[i] = w.Body.String(), w.Code
		}()
	}
	wg.Wait()
	for i := range n {
		if codes[i] != 200 || bodies[i] != bodies[0] {
			t.Fatalf("duplicate %d: %d %s, want 200 %s", i, codes[i], bodies[i], bodies[0])
		}
	}
	if got := ons(ch); got != 1 {
		t.Fatalf("%d concurrent duplicates pulsed %d times, want 1", n, got)
	}
}

func TestIdempotencyBounded(t *testing.T) {
	now := time.Unix(1000, 0)
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	f := newFixture(t, Options{IdempotencyCap: 2, IdempotencyTTL: time.Minute, Now: clock})
	ch, cancel := f.devs.Subscribe(1000)
	defer cancel()
	for _, k := range []string{"a", "b", "c"} {
		f.do("POST", "/api/devices/relay1/pulse?ms=1", token, "Idempotency-Key", k)
	}
	if n := f.api.idem.Len(); n != 2 {
		t.Fatalf("%d keys kept, want the cap 2", n)
	}
	_ = ons(ch)
	f.do("POST", "/api/devices/relay1/pulse?ms=1", token, "Idempotency-Key", "c") // kept: no run
	if n := ons(ch); n != 0 {
		t.Fatalf("kept key ran again (%d)", n)
	}
	f.do("POST", "/api/devices/relay1/pulse?ms=1", token, "Idempotency-Key", "a") // evicted: runs
	if n := ons(ch); n != 1 {
		t.Fatalf("evicted key ran %d times, want 1", n)
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	f.do("POST", "/api/devices/relay1/pulse?ms=1", token, "Idempotency-Key", "a") // expired: runs
	if n := ons(ch); n != 1 {
		t.Fatalf("expired key ran %d times, want 1", n)
	}
	if w := f.do("POST", "/api/devices/relay1/read", token, "Idempotency-Key", strings.Repeat("x", 300)); w.Code != 400 {
		t.Fatalf("long key: %d, want 400", w.Code)
	}
}

// The same key with another body is another request: refused with 422, not
// answered with the first request's result (invariant 5: the key covers
// the body).
func TestIdempotencyCoversBody(t *testing.T) {
	f := newFixture(t, Options{})
	post := func(body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/api/devices/relay1/turn_on", strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("Idempotency-Key", "kb")
		w := httptest.NewRecorder()
		f.mux.ServeHTTP(w, r)
		return w
	}
	tests := []struct {
		name, body string
		want       int
		replayed   bool
	}{
		{"first use", `{"note":"a"}`, http.StatusOK, false},
		{"same body again", `{"note":"a"}`, http.StatusOK, true},
		{"another body", `{"note":"b"}`, http.StatusUnprocessableEntity, false},
		{"no body", ``, http.StatusUnprocessableEntity, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := post(tt.body)
			if w.Code != tt.want {
				t.Fatalf("status %d (%s), want %d", w.Code, w.Body, tt.want)
			}
			if got := w.Header().Get("Idempotent-Replayed") == "true"; got != tt.replayed {
				t.Fatalf("replayed = %v, want %v", got, tt.replayed)
			}
		})
	}
}

// A key taken on one board is known on the others: the same key for
// another request is refused (422) and for the same request answered 409
// (it ran there) instead of running twice (invariant 5: keys are known
// cluster-wide).
func TestIdempotencyClusterWide(t *testing.T) {
	here := newFixture(t, Options{})
	var claims []Claim
	there := newFixture(t, Options{OnClaim: func(c Claim) { claims = append(claims, c) }})
	if w := there.do("POST", "/api/devices/relay1/turn_on", token, "Idempotency-Key", "cw"); w.Code != 200 {
		t.Fatalf("first use: %d %s", w.Code, w.Body)
	}
	if len(claims) != 1 || claims[0].Key != KeyHash("cw") || claims[0].Key == "cw" {
		t.Fatalf("claims told to the others: %+v, want one, by digest", claims)
	}
	// the node sets the board from the stream the claim came on
	c := claims[0]
	c.Board = "ews2"
	here.api.Remember(c)
	ch, cancel := here.devs.Subscribe(100)
	defer cancel()
	tests := []struct {
		name, target, key string
		want              int
		has               string
	}{
		{"same key, another request", "/api/devices/relay2/turn_on", "cw", http.StatusUnprocessableEntity, "on board ews2"},
		{"same key, same request", "/api/devices/relay1/turn_on", "cw", http.StatusConflict, "already ran on board ews2"},
		{"another key runs", "/api/devices/relay1/turn_on", "cw2", http.StatusOK, `"name":"relay1"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := here.do("POST", tt.target, token, "Idempotency-Key", tt.key)
			if w.Code != tt.want || !strings.Contains(w.Body.String(), tt.has) {
				t.Fatalf("%d %s, want %d with %q", w.Code, w.Body, tt.want, tt.has)
			}
		})
	}
	if n := ons(ch); n != 1 {
		t.Fatalf("this board switched %d times, want 1 (only the new key)", n)
	}
	here.api.Remember(Claim{Key: "x"})      // no board: ignored
	here.api.Remember(Claim{Board: "ews3"}) // no key: ignored
	if w := here.do("POST", "/api/devices/relay2/turn_on", token, "Idempotency-Key", "x"); w.Code != 200 {
		t.Fatalf("a claim without a board must be ignored: %d %s", w.Code, w.Body)
	}
}

// The fingerprint takes the body the front door read (httpx.Body) and
// never reads r.Body again: a second read would fail here.
func TestFingerprintUsesTheBodyReadOnEntry(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/api/devices/r1/set", strings.NewReader(`{"value":1}`))
	b, err := httpx.ReadBody(r, 1<<10)
	if err != nil {
		t.Fatal(err)
	}
	r = httpx.WithBody(r, b)
	r.Body = io.NopCloser(iotest.ErrReader(errors.New("devapi: body read twice")))
	fp, err := fingerprint(r)
	if err != nil {
		t.Fatalf("fingerprint: %v", err)
	}
	other := httpx.WithBody(httptest.NewRequest(http.MethodPost, "/api/devices/r1/set", nil), []byte(`{"value":2}`))
	fp2, err := fingerprint(other)
	if err != nil {
		t.Fatal(err)
	}
	if fp == fp2 || !strings.Contains(fp, "body sha256:") {
		t.Fatalf("fingerprints %q and %q: want the body in each, and different", fp, fp2)
	}
}
