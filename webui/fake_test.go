//go:build browser

package webui

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// fakeDevice is a device as the API shows it (docs/DESIGN.md field names).
type fakeDevice struct {
	Name    string `json:"name"`
	Driver  string `json:"driver"`
	Node    string `json:"node"`
	State   string `json:"state"`
	Value   any    `json:"value"`
	Unit    any    `json:"unit"`
	Updated string `json:"updated"`
	Error   string `json:"error,omitempty"`
	// Simulated: on a simulated board, or a sim-* driver
	Simulated bool `json:"simulated,omitempty"`
	// Restored: brought back from the cluster's memory after a restart
	Restored bool `json:"restored,omitempty"`
}

type fakeNode struct {
	Name         string             `json:"name"`
	Rank         int                `json:"rank"`
	Addr         string             `json:"addr"`
	HTTP         string             `json:"http"`
	Linknum      int                `json:"linknum"`
	Capacity     int                `json:"capacity"`
	Weight       int                `json:"weight"`
	Runstate     string             `json:"runstate"`
	Load         map[string]float64 `json:"load"`
	LastSeenMS   int64              `json:"last_seen_ms"`
	AuthMismatch bool               `json:"auth_mismatch,omitempty"`
	Simulated    bool               `json:"simulated,omitempty"`
	LoadUnknown  []string           `json:"load_unknown,omitempty"`
	RTMs         float64            `json:"rt_ms,omitempty"`
	ClockOffset  *int64             `json:"clock_offset_ms,omitempty"`
}

type fakeCluster struct {
	Epoch     int                `json:"epoch"`
	Master    string             `json:"master"`
	Version   int                `json:"version"`
	Self      string             `json:"self"`
	Nodes     []fakeNode         `json:"nodes"`
	Queue     map[string]int     `json:"queue"`
	Completed map[string]int     `json:"completed"`
	Policy    string             `json:"policy,omitempty"`
	Limits    map[string]float64 `json:"limits,omitempty"`
}

// fakePost records one device action the UI sent.
type fakePost struct {
	Path, Idem, CSRF string
	Authed           bool
}

type sseEvent struct{ name, data string }

// fakeBoard is a hand-written stand-in for a node's HTTP API: devices, cluster, login and /events.
type fakeBoard struct {
	token string

	mu       sync.Mutex
	sessions map[string]bool
	devices  []*fakeDevice
	cluster  fakeCluster
	fail     map[string]string // device -> error its actions answer with (502)
	shed     map[string]int    // device -> how many of its next actions answer 503 (a takeover)
	noBoard  map[string]bool   // device -> its actions answer 503 with reason no-board
	posts    []fakePost
	posted   chan struct{}  // closed and replaced on each post, to wake waitPost
	paths    map[string]int // every path requested, to prove what the page did not load
	streams  map[chan sseEvent]struct{}
	refuse   bool          // /events answers 503
	drop     chan struct{} // closed to end every open stream
}

func newFakeBoard(token string) *fakeBoard {
	now := time.Now().UTC().Format(time.RFC3339Nano)
	f := &fakeBoard{
		token:    token,
		sessions: map[string]bool{},
		fail:     map[string]string{"meter": "modbus: read register 3 of 10.0.0.50:502: timeout after 500ms"},
		paths:    map[string]int{},
		shed:     map[string]int{},
		noBoard:  map[string]bool{},
		streams:  map[chan sseEvent]struct{}{},
		drop:     make(chan struct{}),
		posted:   make(chan struct{}),
	}
	f.devices = []*fakeDevice{
		{Name: "relay1", Driver: "gpio-out", Node: "ews2", State: "off", Value: false, Updated: now},
		{Name: "relay2", Driver: "gpio-out", Node: "ews2", State: "on", Value: true, Updated: now, Restored: true},
		{Name: "pump", Driver: "sim-switch", Node: "ews3", State: "off", Value: false, Updated: now, Simulated: true},
		{Name: "led", Driver: "pwm", Node: "ews1", State: "on", Value: 40.0, Unit: "%", Updated: now},
		{Name: "door", Driver: "gpio-in", Node: "ews1", State: "closed", Value: 0, Updated: now},
		{Name: "room", Driver: "bmxx80", Node: "ews1", State: "ok",
			Value: map[string]any{"temperature": 22.4, "humidity": 41.0, "pressure": 1013.2},
			Unit:  map[string]any{"temperature": "°C", "humidity": "%", "pressure": "hPa"}, Updated: now},
		{Name: "tank", Driver: "ds18b20", Node: "ews3", State: "ok", Value: 18.25, Unit: "°C", Updated: now, Simulated: true},
		{Name: "<img src=x onerror=alert(1)>", Driver: "sim-switch", Node: "ews3", State: "off", Value: false, Updated: now, Simulated: true},
		{Name: "coil7", Driver: "modbus-coil", Node: "any", State: "off", Value: false, Updated: now},
		{Name: "meter", Driver: "modbus-register", Node: "any", State: "error", Value: nil, Unit: "V", Updated: now,
			Error: "modbus: timeout"},
	}
	f.cluster = fakeCluster{
		Epoch: 1, Master: "ews1", Version: 41, Self: "ews2",
		Nodes: []fakeNode{
			{Name: "ews1", Rank: 0, Addr: "127.0.0.1:7946", HTTP: "127.0.0.1:8081", Linknum: 3, Capacity: 4, Weight: 1, Runstate: "running", Load: map[string]float64{"cpu": 0.42, "mem": 0.31, "net": 0.1, "disk": 0.02, "disk_used": 0.35}, LastSeenMS: 80, RTMs: 4.2},
			{Name: "ews2", Rank: 1, Addr: "127.0.0.1:7947", HTTP: "127.0.0.1:8082", Linknum: 1, Capacity: 4, Weight: 1, Runstate: "running", Load: map[string]float64{"cpu": 0.18, "mem": 0.27, "net": 0.05, "disk": 0.01, "disk_used": 0.5}, LastSeenMS: 0, RTMs: 12},
			{Name: "ews3", Rank: 2, Addr: "127.0.0.1:7948", HTTP: "127.0.0.1:8083", Linknum: 4, Capacity: 4, Weight: 2, Runstate: "overloaded", Load: map[string]float64{"cpu": 0.91, "mem": 0.64, "net": 0.3, "disk": 0.05, "disk_used": 0.86}, LastSeenMS: 120, Simulated: true, RTMs: 140},
		},
		Queue:     map[string]int{"control": 2, "browse": 7},
		Completed: map[string]int{"control": 0, "browse": 0},
	}
	return f
}

func (f *fakeBoard) routes(ui http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/", ui)
	mux.HandleFunc("GET /api/cluster", func(w http.ResponseWriter, r *http.Request) { f.json(w, 200, f.snapshotCluster()) })
	mux.HandleFunc("GET /api/devices", func(w http.ResponseWriter, r *http.Request) { f.json(w, 200, f.snapshotDevices()) })
	mux.HandleFunc("GET /api/session", func(w http.ResponseWriter, r *http.Request) {
		f.json(w, 200, map[string]any{"auth": "token", "authenticated": f.authed(r)})
	})
	mux.HandleFunc("POST /api/login", f.login)
	mux.HandleFunc("POST /api/logout", func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("ews_session"); err == nil {
			f.mu.Lock()
			delete(f.sessions, c.Value)
			f.mu.Unlock()
		}
		http.SetCookie(w, &http.Cookie{Name: "ews_session", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
		f.json(w, 200, map[string]bool{"ok": true})
	})
	mux.HandleFunc("POST /api/devices/{name}/{action}", f.action)
	mux.HandleFunc("GET /events", f.events)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.paths[r.URL.Path]++
		f.mu.Unlock()
		mux.ServeHTTP(w, r)
	})
}

func (f *fakeBoard) json(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (f *fakeBoard) fail4xx(w http.ResponseWriter, status int, format string, args ...any) {
	f.json(w, status, map[string]string{"error": fmt.Sprintf(format, args...)})
}

func (f *fakeBoard) snapshotCluster() fakeCluster {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.cluster
	c.Nodes = append([]fakeNode(nil), c.Nodes...)
	c.Queue = copyMap(c.Queue)
	c.Completed = copyMap(c.Completed)
	return c
}

func copyMap(m map[string]int) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func (f *fakeBoard) snapshotDevices() []fakeDevice {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]fakeDevice, len(f.devices))
	for i, d := range f.devices {
		out[i] = *d
	}
	return out
}

func (f *fakeBoard) authed(r *http.Request) bool {
	if r.Header.Get("Authorization") == "Bearer "+f.token {
		return true
	}
	c, err := r.Cookie("ews_session")
	if err != nil {
		return false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sessions[c.Value]
}

func (f *fakeBoard) login(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Token string `json:"token"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		f.fail4xx(w, 400, "login: bad body: %v", err)
		return
	}
	if body.Token != f.token {
		f.fail4xx(w, 401, "login: wrong token")
		return
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := hex.EncodeToString(b)
	f.mu.Lock()
	f.sessions[id] = true
	f.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: "ews_session", Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
	f.json(w, 200, map[string]bool{"ok": true})
}

func (f *fakeBoard) action(w http.ResponseWriter, r *http.Request) {
	name, action := r.PathValue("name"), r.PathValue("action")
	authed := f.authed(r)
	f.mu.Lock()
	f.posts = append(f.posts, fakePost{Path: r.URL.Path + "?" + r.URL.RawQuery, Idem: r.Header.Get("Idempotency-Key"), CSRF: r.Header.Get("X-Requested-With"), Authed: authed})
	close(f.posted)
	f.posted = make(chan struct{})
	f.mu.Unlock()
	if !authed {
		f.fail4xx(w, 401, "devices: %q: credentials required", name)
		return
	}
	if r.Header.Get("X-Requested-With") == "" {
		f.fail4xx(w, 403, "devices: cross-site request refused")
		return
	}
	f.mu.Lock()
	var d *fakeDevice
	for _, x := range f.devices {
		if x.Name == name {
			d = x
		}
	}
	msg := f.fail[name]
	shed := f.shed[name] > 0
	if shed {
		f.shed[name]--
	}
	noBoard := f.noBoard[name]
	f.mu.Unlock()
	if noBoard {
		w.Header().Set("Retry-After", "1")
		f.json(w, 503, map[string]string{"error": "dispatch: control request shed: no-board", "reason": "no-board"})
		return
	}
	if shed {
		w.Header().Set("Retry-After", "1")
		f.fail4xx(w, 503, "sched: master changing, retry")
		return
	}
	if d == nil {
		f.fail4xx(w, 404, "devices: no device %q", name)
		return
	}
	if msg != "" {
		f.fail4xx(w, 502, "%s", msg)
		return
	}
	f.mu.Lock()
	switch action {
	case "turn_on":
		d.State, d.Value = "on", true
	case "turn_off":
		d.State, d.Value = "off", false
	case "toggle":
		if d.State == "on" {
			d.State, d.Value = "off", false
		} else {
			d.State, d.Value = "on", true
		}
	case "set":
		v, err := strconv.ParseFloat(r.URL.Query().Get("value"), 64)
		if err != nil || v < 0 || v > 100 {
			f.mu.Unlock()
			f.fail4xx(w, 400, "devices: %q: value %q out of range 0..100", name, r.URL.Query().Get("value"))
			return
		}
		d.Value = v
	case "pulse", "read":
	default:
		f.mu.Unlock()
		f.fail4xx(w, 400, "devices: %q: unknown action %q", name, action)
		return
	}
	d.Updated = time.Now().UTC().Format(time.RFC3339Nano)
	snap := *d
	f.mu.Unlock()
	f.push("device", snap)
	f.json(w, 200, snap)
}

// push sends an event to every open stream; a full stream drops the event (never blocks).
func (f *fakeBoard) push(name string, v any) {
	b, _ := json.Marshal(v)
	f.mu.Lock()
	defer f.mu.Unlock()
	for ch := range f.streams {
		select {
		case ch <- sseEvent{name, string(b)}:
		default:
		}
	}
}

// setDevices replaces the device list and pushes it.
func (f *fakeBoard) setDevices(ds []*fakeDevice) {
	f.mu.Lock()
	f.devices = ds
	f.mu.Unlock()
	f.push("devices", f.snapshotDevices())
}

// updateCluster changes the table under the lock and pushes it.
func (f *fakeBoard) updateCluster(change func(c *fakeCluster)) {
	f.mu.Lock()
	change(&f.cluster)
	f.cluster.Version++
	f.mu.Unlock()
	f.push("cluster", f.snapshotCluster())
}

// postsTo counts the actions posted to path (e.g. "/api/devices/door/read?").
func (f *fakeBoard) postsTo(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.postsToLocked(path)
}

func (f *fakeBoard) postsToLocked(path string) int {
	n := 0
	for _, p := range f.posts {
		if p.Path == path {
			n++
		}
	}
	return n
}

// waitPost waits until more than n actions were posted to path, or ctx ends.
func (f *fakeBoard) waitPost(ctx context.Context, path string, n int) error {
	for {
		f.mu.Lock()
		wake, got := f.posted, f.postsToLocked(path)
		f.mu.Unlock()
		if got > n {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return fmt.Errorf("no action posted to %s: %w", path, ctx.Err())
		}
	}
}

// dropStreams ends every open stream; with refuse, new ones get 503 until allow.
func (f *fakeBoard) dropStreams(refuse bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.refuse = refuse
	close(f.drop)
	f.drop = make(chan struct{})
}

func (f *fakeBoard) allow() {
	f.mu.Lock()
	f.refuse = false
	f.mu.Unlock()
}

func (f *fakeBoard) openStreams() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.streams)
}

func (f *fakeBoard) events(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	refuse, drop := f.refuse, f.drop
	f.mu.Unlock()
	if refuse {
		f.fail4xx(w, 503, "events: board restarting")
		return
	}
	fl, ok := w.(http.Flusher)
	if !ok {
		f.fail4xx(w, 500, "events: no flusher")
		return
	}
	ch := make(chan sseEvent, 256)
	f.mu.Lock()
	f.streams[ch] = struct{}{}
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.streams, ch)
		f.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(200)
	write := func(name string, v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b)
	}
	write("cluster", f.snapshotCluster())
	write("devices", f.snapshotDevices())
	fl.Flush()
	ping := time.NewTicker(5 * time.Second)
	defer ping.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-drop:
			return
		case <-ping.C:
			fmt.Fprint(w, ": ping\n\n")
			fl.Flush()
		case ev := <-ch:
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev.name, strings.ReplaceAll(ev.data, "\n", ""))
			fl.Flush()
		}
	}
}
