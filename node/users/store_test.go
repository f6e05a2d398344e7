package users

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/node/durable"
)

// fixture is a store of a master with devices relay1, relay2, led1.
func fixture(t testing.TB, opts Options) *Store {
	t.Helper()
	if opts.Secret == nil {
		opts.Secret = []byte("cluster-key-of-the-test-0123456789")
	}
	if opts.Devices == nil {
		opts.Devices = func() []string { return []string{"relay1", "relay2", "led1"} }
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// call sends one request to the users API as p.
func call(t *testing.T, s *Store, p *Principal, method, path, body string) (int, map[string]any) {
	t.Helper()
	mux := http.NewServeMux()
	s.Register(mux, func(*http.Request) *Principal { return p })
	w := httptest.NewRecorder()
	mux.ServeHTTP(w, httptest.NewRequest(method, path, strings.NewReader(body)))
	var m map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &m); err != nil {
		t.Fatalf("%s %s: %v in %q", method, path, err, w.Body)
	}
	return w.Code, m
}

func TestAPIBadInput(t *testing.T) {
	s := fixture(t, Options{})
	if code, m := call(t, s, root, "POST", "/api/users", `{"name":"op1","role":"operator","devices":["relay*"]}`); code != 201 || m["token"] == "" || m["warning"] != nil {
		t.Fatalf("create op1 = %d %v", code, m)
	}
	for _, c := range []struct {
		name, method, path, body string
		want                     int
		errHas                   string
	}{
		{"unknown role", "POST", "/api/users", `{"name":"x","role":"root"}`, 400, "unknown role"},
		{"duplicate", "POST", "/api/users", `{"name":"op1","role":"viewer"}`, 409, "exists"},
		{"empty name", "POST", "/api/users", `{"name":"","role":"viewer"}`, 400, "empty name"},
		{"long name", "POST", "/api/users", `{"name":"` + strings.Repeat("a", MaxName+1) + `","role":"viewer"}`, 400, "longer than"},
		{"odd name", "POST", "/api/users", `{"name":"a b","role":"viewer"}`, 400, "only letters"},
		{"bad pattern", "POST", "/api/users", `{"name":"x","role":"operator","devices":["[relay"]}`, 400, "pattern"},
		{"devices for a viewer", "POST", "/api/users", `{"name":"x","role":"viewer","devices":["a"]}`, 400, "for operators"},
		{"unknown field", "POST", "/api/users", `{"name":"x","role":"viewer","admin":true}`, 400, "unknown field"},
		{"weak password", "POST", "/api/users/op1/password", `{"password":"short"}`, 400, "weak password"},
		{"delete last admin", "DELETE", "/api/users/admin", ``, 409, "last admin"},
		{"demote last admin", "PUT", "/api/users/admin", `{"role":"viewer"}`, 409, "last admin"},
		{"rotate missing", "POST", "/api/users/nobody/rotate", ``, 404, "no user"},
		{"delete missing", "DELETE", "/api/users/nobody", ``, 404, "no user"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, m := call(t, s, root, c.method, c.path, c.body)
			if code != c.want || !strings.Contains(m["error"].(string), c.errHas) {
				t.Errorf("%s %s = %d %v, want %d with %q", c.method, c.path, code, m, c.want, c.errHas)
			}
		})
	}
	if code, m := call(t, s, root, "POST", "/api/users", `{"name":"p2","role":"operator","devices":["pump*"]}`); code != 201 || !strings.Contains(m["warning"].(string), "pump*") {
		t.Errorf("a pattern that matches nothing = %d %v, want 201 with a warning", code, m)
	}
	if v := s.Version(); v != 2 {
		t.Errorf("version after two creations = %d, want 2 (refusals write nothing)", v)
	}
}

func TestAPIRights(t *testing.T) {
	s := fixture(t, Options{})
	_, m := call(t, s, root, "POST", "/api/users", `{"name":"op1","role":"operator","devices":["relay*"]}`)
	op := s.Token(m["token"].(string))
	_, m = call(t, s, root, "POST", "/api/users", `{"name":"v1","role":"viewer"}`)
	v := s.Token(m["token"].(string))
	if op == nil || v == nil || op.Name != "op1" || v.Role != RoleViewer {
		t.Fatalf("tokens name %v and %v", op, v)
	}
	for _, c := range []struct {
		who          *Principal
		method, path string
		want         int
	}{
		{op, "GET", "/api/users", 403},
		{op, "POST", "/api/users/v1/rotate", 403},
		{v, "POST", "/api/users/op1/password", 403},
		{op, "POST", "/api/users/op1/password", 200}, // their own
		{root, "POST", "/api/users/v1/password", 200},
	} {
		code, m := call(t, s, c.who, c.method, c.path, `{"password":"long-enough-pw"}`)
		if code != c.want {
			t.Errorf("%s %s as %s = %d %v, want %d", c.method, c.path, c.who.Name, code, m, c.want)
		}
	}
	if s.Password("op1", "long-enough-pw") == nil || s.Password("op1", "wrong-password") != nil || s.Password("nobody", "long-enough-pw") != nil {
		t.Error("password check wrong")
	}
	if s.Token(m["token"].(string)) == nil {
		t.Error("a password change ended v1's token (it should end its sessions only)")
	}
	if s.Session("op1", op.Gen) != nil {
		t.Error("op1's old session holds after a password change")
	}
}

func TestRightsByPath(t *testing.T) {
	op := &Principal{Name: "op1", Role: RoleOperator, Devices: []string{"relay*", "pump1"}}
	v := &Principal{Name: "v1", Role: RoleViewer}
	for _, c := range []struct {
		who          *Principal
		method, path string
		want         int
	}{
		{op, "POST", "/api/devices/relay1/toggle", 0},
		{op, "POST", "/api/devices/pump1/turn_on", 0},
		{op, "POST", "/api/devices/pump12/turn_on", 403},
		{op, "POST", "/api/devices/led1/toggle", 403},
		{op, "GET", "/api/devices/led1", 0},
		{op, "POST", "/cgi-bin/x", 0},
		{v, "POST", "/cgi-bin/x", 403},
		{v, "POST", "/api/devices/relay1/toggle", 403},
		{v, "GET", "/api/devices", 0},
		{op, "POST", "/api/board/restart", 403},
		{op, "POST", "/api/board/firmware", 403},
		{op, "POST", "/api/cluster/upgrade", 403},
		{op, "GET", "/api/cluster/upgrade", 0},
		{op, "GET", "/api/audit", 403},
		{root, "POST", "/api/board/restart", 0},
		{nil, "GET", "/", 403},
	} {
		if got, msg := Rights(c.who, httptest.NewRequest(c.method, c.path, nil)); got != c.want {
			t.Errorf("%v %s %s = %d %q, want %d", c.who, c.method, c.path, got, msg, c.want)
		}
	}
}

// A board of the previous build's replication takes only newer versions
// (never goes back), from a sealed store of its own cluster only; a
// rotation ends the old token at once. Once the durable log holds the
// store, nothing but the log changes it.
func TestReplication(t *testing.T) {
	master := fixture(t, Options{})
	follower := fixture(t, Options{})
	stranger := fixture(t, Options{Secret: []byte("another cluster's key 0123456789")})
	var sent []string
	master.opts.OnChange = func(s string) { sent = append(sent, s) }

	_, m := call(t, master, root, "POST", "/api/users", `{"name":"op1","role":"operator","devices":["relay*"]}`)
	old := m["token"].(string)
	_, m = call(t, master, root, "POST", "/api/users/op1/rotate", ``)
	fresh := m["token"].(string)
	if len(sent) != 2 {
		t.Fatalf("master told %d versions, want 2", len(sent))
	}
	if took, err := follower.AdoptSealed(sent[1]); !took || err != nil {
		t.Fatalf("adopt v2 = %v, %v", took, err)
	}
	if took, err := follower.AdoptSealed(sent[0]); took || err != nil {
		t.Errorf("adopt v1 after v2 = %v, %v: a board went back", took, err)
	}
	if follower.Token(old) != nil || follower.Token(fresh) == nil || follower.Version() != 2 {
		t.Errorf("follower: old %v, fresh %v, version %d", follower.Token(old), follower.Token(fresh), follower.Version())
	}
	if _, err := stranger.AdoptSealed(sent[1]); err == nil {
		t.Error("a board of another cluster opened the store")
	}
	// the master's store is in its log: a stream's version is ignored
	if took, _ := master.Adopt(&Doc{Version: 9, Users: []User{{Name: AdminName, Role: RoleAdmin}}}); took || master.Version() != 2 {
		t.Errorf("a store in the log took a streamed version 9: %v, now %d", took, master.Version())
	}
}

// noQuorum is the durable state of a board cut off from the majority of
// the voters.
type noQuorum struct{ *durable.Alone }

func (noQuorum) Apply(context.Context, string, []byte, uint64) (uint64, error) {
	return 0, &durable.NoQuorumError{Reachable: 1, Voters: 3}
}

// A side without a majority writes nothing: 503 with Retry-After and the
// contract's reason; reads still answer, with their version.
func TestNoQuorum(t *testing.T) {
	s := fixture(t, Options{State: noQuorum{durable.NewAlone(nil)}})
	for _, c := range []struct{ method, path, body string }{
		{"POST", "/api/users", `{"name":"x","role":"viewer"}`},
		{"PUT", "/api/users/admin", `{"role":"admin"}`},
		{"POST", "/api/users/admin/rotate", ``},
	} {
		mux := http.NewServeMux()
		s.Register(mux, func(*http.Request) *Principal { return root })
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(c.method, c.path, strings.NewReader(c.body)))
		var m map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &m)
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" || m["error"] != "no quorum: 1 of 3 voters reachable" {
			t.Errorf("%s %s = %d %v (Retry-After %q)", c.method, c.path, w.Code, m, w.Header().Get("Retry-After"))
		}
	}
	if code, m := call(t, s, root, "GET", "/api/users", ``); code != http.StatusOK || m["version"] != float64(0) {
		t.Errorf("read without quorum = %d %v", code, m)
	}
}

// The store of the previous build (users.json) goes into the log once:
// the first board's import commits, a second board's finds it there and
// takes the committed store; a fresh board with nothing written imports
// nothing, and tries again until the log holds the store.
func TestImport(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ews1.users.json")
	seed := fixture(t, Options{Path: path})
	_, m := call(t, seed, root, "POST", "/api/users", `{"name":"op1","role":"operator","devices":["relay*"]}`)
	tok := m["token"].(string)
	_, _ = call(t, seed, root, "POST", "/api/users", `{"name":"v1","role":"viewer"}`)

	state := durable.NewAlone(nil)
	first := fixture(t, Options{Path: path, State: state})
	fresh := fixture(t, Options{State: state, Path: filepath.Join(dir, "ews2.users.json")})
	if err := fresh.Import(context.Background()); !errors.Is(err, ErrNothingToImport) {
		t.Fatalf("a fresh board's import before any: %v, want ErrNothingToImport (try again)", err)
	}
	if err := first.Import(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := fresh.Import(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d := state.Get(durable.KindUsers); d.Version != 1 {
		t.Fatalf("log version %d after two imports, want 1", d.Version)
	}
	for _, s := range []*Store{first, fresh} {
		if s.Version() != 2 || s.Token(tok) == nil || len(s.Doc().Users) != 3 {
			t.Errorf("after import: version %d, op1 %v, %d users", s.Version(), s.Token(tok), len(s.Doc().Users))
		}
	}
	// the next write continues from the imported version
	if code, _ := call(t, fresh, root, "DELETE", "/api/users/v1", ``); code != http.StatusOK || first.Version() != 3 || first.User("v1") != nil {
		t.Errorf("write after import = %d, version %d", code, first.Version())
	}
}

// A user deleted and created again under the same name does not inherit
// the old user's sessions.
func TestRecreatedUserSessions(t *testing.T) {
	s := fixture(t, Options{})
	_, m := call(t, s, root, "POST", "/api/users", `{"name":"op1","role":"operator","devices":["relay*"]}`)
	old := s.Token(m["token"].(string))
	call(t, s, root, "DELETE", "/api/users/op1", ``)
	call(t, s, root, "POST", "/api/users", `{"name":"op1","role":"admin"}`)
	if p := s.Session("op1", old.Gen); p != nil {
		t.Errorf("a session of the deleted op1 holds for the new op1 (%s)", p.Role)
	}
}

// A board keeps its version across a restart, and never loads an older
// one over it from a peer after.
func TestPersistence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ews1.users.json")
	s := fixture(t, Options{Path: path})
	_, m := call(t, s, root, "POST", "/api/users", `{"name":"op1","role":"operator","devices":["relay*"]}`)
	again := fixture(t, Options{Path: path})
	if again.Version() != 1 || again.Token(m["token"].(string)) == nil {
		t.Errorf("after restart: version %d, token %v", again.Version(), again.Token(m["token"].(string)))
	}
	if took, _ := again.Adopt(&Doc{Version: 0, Users: []User{{Name: AdminName, Role: RoleAdmin}}}); took {
		t.Error("took version 0 over 1 after a restart")
	}
}

func TestPasswordHash(t *testing.T) {
	enc := hashPassword("correct horse")
	for _, c := range []struct {
		enc, pw string
		ok      bool
		err     bool
	}{
		{enc, "correct horse", true, false},
		{enc, "correct hors", false, false},
		{"$2a$10$bcrypt", "x", false, true},
		{strings.Replace(enc, "m=16384", "m=999999999", 1), "correct horse", false, true},
		// past the bounds: refused before argon2 runs (t=0 made it panic)
		{costlyHash, "x", false, true},
		{strings.Replace(enc, "m=16384,t=2,p=1", "m=131072,t=2,p=1", 1), "correct horse", false, true},
		{strings.Replace(enc, "m=16384,t=2,p=1", "m=16384,t=9,p=1", 1), "correct horse", false, true},
		{strings.Replace(enc, "m=16384,t=2,p=1", "m=16384,t=2,p=5", 1), "correct horse", false, true},
		{strings.Replace(enc, "m=16384,t=2,p=1", "m=16384,t=0,p=1", 1), "correct horse", false, true},
		{strings.Replace(enc, "m=16384,t=2,p=1", "m=16384,t=2,p=0", 1), "correct horse", false, true},
	} {
		ok, err := checkPassword(c.enc, c.pw)
		if ok != c.ok || (err != nil) != c.err {
			t.Errorf("checkPassword(%.30q, %q) = %v, %v", c.enc, c.pw, ok, err)
		}
	}
}

// A store holding a hash past the bounds is refused where it would be
// taken: from its file at start, from another board (sealed), from the
// log (a committed version). What hashPassword writes is within them.
func TestHashBoundsAtLoad(t *testing.T) {
	if _, err := parseHash(hashPassword("correct horse")); err != nil {
		t.Fatalf("the store's own hash is refused: %v", err)
	}
	bad := &Doc{Version: 5, Users: []User{{Name: AdminName, Role: RoleAdmin, Password: costlyHash}}}
	path := filepath.Join(t.TempDir(), "users.json")
	b, _ := json.Marshal(bad)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// refused, but never a reason not to start (issue 45): the store
	// starts at its first version and says why
	if kept, err := New(Options{Path: path, Secret: []byte("k")}); err != nil || kept.KeptError() == nil ||
		!strings.Contains(kept.KeptError().Error(), "argon2id cost") || kept.Version() != 0 {
		t.Errorf("a kept store with a costly hash: %v, kept error %v, want refused", err, kept.KeptError())
	}
	s := fixture(t, Options{})
	if took, err := s.AdoptSealed(s.seal(bad)); took || err == nil {
		t.Errorf("adopted a costly hash from a board: %v %v", took, err)
	}
	st := durable.NewAlone(nil)
	s = fixture(t, Options{State: st})
	if _, err := st.Apply(context.Background(), durable.KindUsers, []byte(s.seal(bad)), 0); err != nil {
		t.Fatal(err)
	}
	if s.Version() == 5 || s.Password(AdminName, "x") != nil {
		t.Errorf("a committed costly hash was installed: version %d", s.Version())
	}
}

// BenchmarkCheckToken is the per-request cost of a user's token: one
// HMAC-SHA256 and a map lookup (docs/BENCHMARKS.md).
func BenchmarkCheckToken(b *testing.B) {
	s := fixture(b, Options{})
	var tok string
	for i := range 100 {
		_ = i
		w := httptest.NewRecorder()
		mux := http.NewServeMux()
		s.Register(mux, func(*http.Request) *Principal { return root })
		mux.ServeHTTP(w, httptest.NewRequest("POST", "/api/users", strings.NewReader(`{"name":"u`+strings.Repeat("x", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26))+`","role":"viewer"}`)))
		var m map[string]any
		_ = json.Unmarshal(w.Body.Bytes(), &m)
		if t, ok := m["token"].(string); ok {
			tok = t
		}
	}
	if s.Token(tok) == nil {
		b.Fatal("no token")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if s.Token(tok) == nil {
			b.Fatal("refused")
		}
	}
}

// BenchmarkPassword is a login's cost (argon2id, 16 MiB, t=2).
func BenchmarkPassword(b *testing.B) {
	enc := hashPassword("correct horse battery")
	b.ReportAllocs()
	for b.Loop() {
		if ok, _ := checkPassword(enc, "correct horse battery"); !ok {
			b.Fatal("refused")
		}
	}
}

// BenchmarkAdoptSealed is what a board spends taking a new version of a
// store of 100 users from a peer's stream: open (AES-GCM), decode,
// validate, index, persist, seal again for its own stream.
func BenchmarkAdoptSealed(b *testing.B) {
	master := fixture(b, Options{})
	var sealed []string
	master.opts.OnChange = func(s string) { sealed = append(sealed, s) }
	mux := http.NewServeMux()
	master.Register(mux, func(*http.Request) *Principal { return root })
	for i := range 100 {
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/api/users", strings.NewReader(`{"name":"user`+strconv.Itoa(i)+`","role":"viewer"}`)))
	}
	last := sealed[len(sealed)-1]
	b.ReportAllocs()
	b.SetBytes(int64(len(last)))
	path := filepath.Join(b.TempDir(), "u.json")
	for b.Loop() {
		b.StopTimer()
		os.Remove(path)
		f := fixture(b, Options{Path: path})
		b.StartTimer()
		if took, err := f.AdoptSealed(last); !took || err != nil {
			b.Fatal(took, err)
		}
	}
}
