package e2e

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/node/users"
)

// `ews user` against the users API (a store behind an admin's token).
func TestUserCommand(t *testing.T) {
	st, err := users.New(users.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	st.Register(mux, func(r *http.Request) *users.Principal {
		if r.Header.Get("Authorization") == "Bearer admin-tok" {
			return users.Root()
		}
		return &users.Principal{Name: "v", Role: users.RoleViewer}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	run := func(env string, args ...string) (int, string, string) {
		t.Setenv("EWS_TOKEN", env)
		var out, errb bytes.Buffer
		code := runMain(t, append([]string{"user"}, args...), &out, &errb)
		return code, out.String(), errb.String()
	}
	code, out, errs := run("admin-tok", "add", "op1", "--role", "operator", "--devices", "relay*,pump1", "--url", srv.URL)
	tok := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(tok, users.TokenPrefix) || st.Token(tok) == nil {
		t.Fatalf("add = %d %q %q", code, out, errs)
	}
	if code, out, _ := run("admin-tok", "list", "--url", srv.URL); code != 0 || !strings.Contains(out, "op1") || !strings.Contains(out, "relay*,pump1") {
		t.Errorf("list = %d %q", code, out)
	}
	code, out, _ = run("admin-tok", "rotate", "op1", "--url", srv.URL)
	if code != 0 || st.Token(tok) != nil || st.Token(strings.TrimSpace(out)) == nil {
		t.Errorf("rotate = %d %q: old token still valid or new one not", code, out)
	}
	for _, c := range []struct {
		env  string
		args []string
		code int
		err  string
	}{
		{"admin-tok", []string{"rotate", "nobody", "--url", srv.URL}, exitError, "404"},
		{"admin-tok", []string{"add", "x", "--role", "root", "--url", srv.URL}, exitError, "unknown role"},
		{"viewer-tok", []string{"list", "--url", srv.URL}, exitError, "403"},
		{"", []string{"list", "--url", srv.URL}, exitUsage, "no token"},
		{"admin-tok", []string{"list"}, exitUsage, "--url is required"},
		{"admin-tok", []string{"frob", "--url", srv.URL}, exitUsage, "unknown subcommand"},
		{"admin-tok", []string{"delete", "--url", srv.URL}, exitUsage, "want a NAME"},
		{"admin-tok", []string{"delete", "op1", "--url", srv.URL}, exitOK, "deleted"},
	} {
		code, _, errs := run(c.env, c.args...)
		if code != c.code || !strings.Contains(errs, c.err) {
			t.Errorf("ews user %v = %d %q, want %d with %q", c.args, code, errs, c.code, c.err)
		}
	}
}
