package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// problems is every problem ParseAll finds in doc.
func problems(t *testing.T, doc string) Errors {
	t.Helper()
	_, errs := ParseAll("ews.toml", []byte(doc))
	return errs
}

func TestDidYouMean(t *testing.T) {
	tests := []struct {
		name, doc, key, msg string
	}{
		{"one letter missing", "[node]\ncapacty = 4\n", "node.capacty", `did you mean "capacity"?`},
		{"case", "[node]\nCapacity = 4\n", "node.Capacity", `did you mean "capacity"?`},
		{"swapped letters", "[cluster]\nhaertbeat = \"1s\"\n", "cluster.haertbeat", `did you mean "heartbeat"?`},
		{"in an array of tables", "[[device]]\nname = \"a\"\ndriver = \"sim-switch\"\ndrivr = \"x\"\n", "device[0].drivr", `did you mean "driver"?`},
		{"unknown table", "[shed]\npolicy = \"lc\"\n", "shed", `did you mean "sched"?`},
		{"nothing near", "[node]\nspeed = 1\n", "node.speed", "unknown key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := problems(t, tt.doc)
			if len(errs) != 1 || errs[0].Key != tt.key || !strings.HasSuffix(errs[0].Msg, tt.msg) {
				t.Fatalf("got %v, want one %s: ...%s", errs, tt.key, tt.msg)
			}
			if tt.name == "nothing near" && strings.Contains(errs[0].Msg, "did you mean") {
				t.Fatalf("suggested a key far from %q: %v", "speed", errs[0])
			}
		})
	}
}

func TestTypeWords(t *testing.T) {
	tests := []struct {
		name, doc string
		line      int
		key, msg  string
	}{
		{"integer", "[node]\ncapacity = \"four\"\n", 2, "node.capacity", "want an integer, got a string"},
		{"integer from a decimal", "[node]\ncapacity = 2.5\n", 2, "node.capacity", "want an integer, got a decimal number"},
		{"string", "[node]\nname = 3\n", 2, "node.name", "want a string, got a number"},
		{"list of strings", "[cluster]\npeers = 3\n", 2, "cluster.peers", "want a list of strings, got a number"},
		{"list element", "[cluster]\npeers = [\n  \"ews1=h:1\",\n  2,\n]\n", 4, "cluster.peers[1]", "want a list of strings, got a number in it"},
		{"list element, no echo from the rules", "[[sched.class]]\nname = \"c\"\nmatch = [\"*\", 3]\n", 3, "sched.class[0].match[1]", "want a list of strings, got a number in it"},
		{"boolean", "[cluster]\npreempt = \"yes\"\n", 2, "cluster.preempt", "want true or false, got a string"},
		{"boolean pointer", "[node]\nmdns = \"on\"\n", 2, "node.mdns", "want true or false, got a string"},
		{"number", "[sched]\nreserve = \"half\"\n", 2, "sched.reserve", "want a number, got a string"},
		{"duration", "[cluster]\ntmax = \"abc\"\n", 2, "cluster.tmax", `want a duration such as "500ms", got "abc"`},
		{"duration not a string", "[cluster]\ntmax = 5\n", 2, "cluster.tmax", `want a duration such as "500ms", got a number`},
		{"table", "node = 1\n", 1, "node", "want a table, got a number"},
		{"list of tables", "device = \"relay\"\n", 1, "device", "want a list of tables ([[device]]), got a string"},
		{"command", "[[supervise]]\nname = \"a\"\ncommand = 1\n", 3, "supervise[0].command", "want a command (a string or a list of strings), got a number"},
		{"map value", "[sched.adaptive]\nweights = { cpu = \"a lot\" }\n", 2, "sched.adaptive.weights.cpu", "want a number, got a string"},
		{"pointer", "[[device]]\nname = \"a\"\ndriver = \"sim-pwm\"\nmin = \"low\"\n", 4, "device[0].min", "want a number, got a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := problems(t, tt.doc)
			if len(errs) != 1 {
				t.Fatalf("want one problem, got %v", errs)
			}
			e := errs[0]
			if e.Line != tt.line || e.Key != tt.key || e.Msg != tt.msg {
				t.Fatalf("got %d %s: %s, want %d %s: %s", e.Line, e.Key, e.Msg, tt.line, tt.key, tt.msg)
			}
			if strings.Contains(e.Msg, "int64") || strings.Contains(e.Msg, "config.") {
				t.Fatalf("Go type name in %q", e.Msg)
			}
		})
	}
}

func TestDuplicatesNameTheFirstLine(t *testing.T) {
	tests := []struct {
		name, doc string
		line      int
		key, msg  string
	}{
		{"device", "[[device]]\nname = \"r\"\ndriver = \"sim-switch\"\n[[device]]\nname = \"r\"\ndriver = \"sim-switch\"\n", 5, "device[1].name", `duplicate device name "r" (first defined on line 2)`},
		{"class", "[[sched.class]]\nname = \"c\"\nmatch = [\"*\"]\n\n[[sched.class]]\nname = \"c\"\nmatch = [\"*\"]\n", 6, "sched.class[1].name", `duplicate class name "c" (first defined on line 2)`},
		{"supervise", "[[supervise]]\nname = \"s\"\ncommand = \"a\"\n[[supervise]]\nname = \"s\"\ncommand = \"b\"\n", 5, "supervise[1].name", `duplicate supervise name "s" (first defined on line 2)`},
		{"peer", "[node]\nname = \"ews1\"\n[cluster]\ninsecure = true\npeers = [\n  \"ews1=h:1\",\n  \"ews1=h:2\",\n]\n", 5, "cluster.peers", `duplicate peer name "ews1" (first defined on line 6)`},
		{"key", "[node]\nname = \"a\"\n\nname = \"b\"\n", 4, "node.name", "defined twice (first defined on line 2)"},
		{"key in an array of tables", "[[device]]\nname = \"a\"\n[[device]]\nname = \"b\"\ndriver = \"sim-switch\"\nname = \"c\"\n", 6, "device[1].name", "defined twice (first defined on line 4)"},
		{"table", "[node]\nname = \"a\"\n[cluster]\n[node]\n", 4, "node", "defined twice (first defined on line 1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hit *Error
			errs := problems(t, tt.doc)
			for _, e := range errs {
				if e.Key == tt.key && e.Msg == tt.msg {
					hit = e
				}
			}
			if hit == nil || hit.Line != tt.line {
				t.Fatalf("want %d %s: %s in:\n%v", tt.line, tt.key, tt.msg, errs)
			}
		})
	}
}

func TestSortedByLine(t *testing.T) {
	es := Errors{{Line: 0, Msg: "none"}, {Line: 5, Col: 3}, {Line: 2}, {Line: 5, Col: 1}}
	es.Sort()
	got := []int{es[0].Line, es[1].Line, es[1].Col, es[2].Line, es[2].Col, es[3].Line}
	want := []int{2, 5, 1, 5, 3, 0}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("order %v, want %v", got, want)
		}
	}
}

func TestWarningFormat(t *testing.T) {
	e := &Error{File: "ews.toml", Line: 3, Col: 1, Key: "http.token_file", Msg: "readable", Warning: true}
	if got, want := e.Error(), "config: ews.toml:3:1: http.token_file: warning: readable"; got != want {
		t.Fatalf("%q, want %q", got, want)
	}
}

func TestCheckSecrets(t *testing.T) {
	dir := t.TempDir()
	file := func(name, body string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		testutil.WriteFile(t, p, []byte(body), mode)
		if err := os.Chmod(p, mode); err != nil { // past the umask
			t.Fatal(err)
		}
		return p
	}
	key := NewKey() + "\n"
	tests := []struct {
		name      string
		http      string // [http] body
		cluster   string // [cluster] body
		errKey    string // "" when none
		errMsg    string
		warnKey   string
		warnMsg   string
		noProblem bool
	}{
		{name: "private token", http: `token_file = "` + file("tok600", "t\n", 0o600) + `"`, noProblem: true},
		{name: "token readable by others", http: `token_file = "` + file("tok644", "t\n", 0o644) + `"`, warnKey: "http.token_file", warnMsg: "readable by others (mode 0644)"},
		{name: "token readable by its group", http: `token_file = "` + file("tok640", "t\n", 0o640) + `"`, warnKey: "http.token_file", warnMsg: "readable by group"},
		{name: "token missing", http: `token_file = "` + filepath.Join(dir, "nope") + `"`, errKey: "http.token_file", errMsg: "cannot read the token"},
		{name: "token empty", http: `token_file = "` + file("empty", " \n", 0o600) + `"`, errKey: "http.token_file", errMsg: "is empty"},
		{name: "inline token wins", http: "token = \"t\"\ntoken_file = \"" + filepath.Join(dir, "nope") + `"`, noProblem: true},
		{name: "no auth, no token file read", http: "auth = \"none\"\ntoken_file = \"" + filepath.Join(dir, "nope") + `"`, noProblem: true},
		{name: "private key", http: `auth = "none"`, cluster: `key_file = "` + file("key600", key, 0o600) + `"`, noProblem: true},
		{name: "key readable by others", http: `auth = "none"`, cluster: `key_file = "` + file("key604", key, 0o604) + `"`, warnKey: "cluster.key_file", warnMsg: "readable by others"},
		{name: "key missing", http: `auth = "none"`, cluster: `key_file = "` + filepath.Join(dir, "nokey") + `"`, errKey: "cluster.key_file", errMsg: "cannot read key"},
		{name: "key not a key", http: `auth = "none"`, cluster: `key_file = "` + file("badkey", "hello\n", 0o600) + `"`, errKey: "cluster.key_file", errMsg: "not valid base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := "[http]\n" + tt.http + "\n[cluster]\n" + tt.cluster + "\n"
			cfg, err := Parse("ews.toml", []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			errs, warns := cfg.CheckSecrets()
			if tt.noProblem {
				if len(errs)+len(warns) > 0 {
					t.Fatalf("errs %v, warns %v; want none", errs, warns)
				}
				return
			}
			check := func(kind string, es Errors, key, msg string, warning bool) {
				if key == "" {
					if len(es) > 0 {
						t.Fatalf("unexpected %s: %v", kind, es)
					}
					return
				}
				if len(es) != 1 || es[0].Key != key || !strings.Contains(es[0].Msg, msg) || es[0].Warning != warning {
					t.Fatalf("%s = %v, want one %s: ...%s", kind, es, key, msg)
				}
				if es[0].Line == 0 {
					t.Fatalf("%s %v has no line", kind, es[0])
				}
			}
			check("errors", errs, tt.errKey, tt.errMsg, false)
			if missing := strings.Contains(tt.name, "missing"); len(errs) == 1 && errors.Is(errs[0], fs.ErrNotExist) != missing {
				t.Fatalf("errors.Is(%v, fs.ErrNotExist) = %v, want %v", errs[0], !missing, missing)
			}
			check("warnings", warns, tt.warnKey, tt.warnMsg, true)
		})
	}
}

func TestDefaultTokenFileSaysSo(t *testing.T) {
	cfg, err := Parse("ews.toml", []byte("[node]\nname = \"ews1\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	cfg.HTTP.TokenFile = filepath.Join(t.TempDir(), "token") // the default, moved where it is missing
	errs, _ := cfg.CheckSecrets()
	if len(errs) != 1 || !strings.Contains(errs[0].Msg, "token_file is not set, so the default") {
		t.Fatalf("errs = %v, want one saying the default is used", errs)
	}
}

func TestClosest(t *testing.T) {
	names := []string{"name", "http", "gossip", "capacity", "weight", "advertise"}
	tests := []struct{ word, want string }{
		{"capacty", "capacity"}, {"nme", "name"}, {"gosip", "gossip"}, {"wieght", "weight"},
		{"colour", ""}, {"x", ""}, {"advertize", "advertise"},
	}
	for _, tt := range tests {
		if got := closest(tt.word, names); got != tt.want {
			t.Errorf("closest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}
