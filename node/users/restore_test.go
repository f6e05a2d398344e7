package users

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRestore: a backup's users become the next version behind If-Match
// (412 when stale, 428 without); a user the backup holds without
// credentials keeps the ones it has here; users not in the backup are
// gone; every session ends (Gen moves); a backup without an admin changes
// nothing. The export leaves hashes out unless asked.
func TestRestore(t *testing.T) {
	s := fixture(t, Options{})
	code, m := call(t, s, Root(), "POST", "/api/users", `{"name":"op1","role":"operator","devices":["relay*"]}`)
	if code != http.StatusCreated {
		t.Fatalf("create op1: %d %v", code, m)
	}
	opTok := m["token"].(string)
	if code, _ := call(t, s, Root(), "POST", "/api/users", `{"name":"v1","role":"viewer"}`); code != http.StatusCreated {
		t.Fatal("create v1")
	}
	if d := s.Export(false); len(d.Users) != 3 || d.Users[1].Token != nil {
		t.Fatalf("export without credentials: %+v", d)
	}
	if d := s.Export(true); d.Users[1].Token == nil {
		t.Fatal("export with credentials: no token hash")
	}
	put := func(ifMatch, body string) (int, string) {
		r := httptest.NewRequest("PUT", "/api/board/users", strings.NewReader(body))
		if ifMatch != "" {
			r.Header.Set("If-Match", ifMatch)
		}
		w := httptest.NewRecorder()
		s.ServeRestore(w, r)
		return w.Code, w.Body.String()
	}
	backup, _ := json.Marshal(Doc{Users: []User{{Name: "admin", Role: RoleAdmin}, {Name: "op1", Role: RoleOperator, Devices: []string{"led*"}}, {Name: "new1", Role: RoleViewer}}})
	v := s.Version()
	for _, c := range []struct {
		name, ifMatch, body string
		want                int
	}{
		{"no If-Match", "", string(backup), http.StatusPreconditionRequired},
		{"stale", `"1"`, string(backup), http.StatusPreconditionFailed},
		{"no admin", `"` + itoa(v) + `"`, `{"users":[{"name":"op1","role":"operator"}]}`, http.StatusBadRequest},
		{"bad role", `"` + itoa(v) + `"`, `{"users":[{"name":"admin","role":"admin"},{"name":"x","role":"root"}]}`, http.StatusBadRequest},
		// the review's hash: each login against it took 256 MiB
		{"costly hash", `"` + itoa(v) + `"`, `{"users":[{"name":"admin","role":"admin","password":"` + costlyHash + `"}]}`, http.StatusBadRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			if code, body := put(c.ifMatch, c.body); code != c.want {
				t.Errorf("%d %s, want %d", code, body, c.want)
			}
			if s.Version() != v {
				t.Errorf("version %d after a refused restore, want %d", s.Version(), v)
			}
		})
	}
	if code, body := put(`"`+itoa(v)+`"`, string(backup)); code != http.StatusOK {
		t.Fatalf("restore: %d %s", code, body)
	}
	d := s.Doc()
	if len(d.Users) != 3 || d.Users[2].Name != "new1" || s.User("v1") != nil {
		t.Errorf("users after restore: %+v", d.Users)
	}
	p := s.Token(opTok)
	if p == nil || p.Name != "op1" || len(p.Devices) != 1 || p.Devices[0] != "led*" {
		t.Errorf("op1 kept its token with the backup's rights: %+v", p)
	}
	for _, u := range d.Users {
		if u.Gen != d.Version {
			t.Errorf("%s: gen %d, want %d (sessions end)", u.Name, u.Gen, d.Version)
		}
	}
}

// costlyHash is a well-formed argon2id hash whose cost (m=256 MiB, t=16,
// p=255) the store refuses.
var costlyHash = "$argon2id$v=19$m=262144,t=16,p=255$c2FsdHNhbHRzYWx0c2FsdA$" + strings.Repeat("A", 43)

func itoa(n uint64) string { b, _ := json.Marshal(n); return string(b) }
