package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// TestConfigCheckListsEveryProblem: five different mistakes, five lines,
// in line order, then the count; exit 1.
func TestConfigCheckListsEveryProblem(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "ews.toml")
	doc := "[node]\nname = \"ews1\"\ncapacty = 4\nweight = \"heavy\"\n[cluster]\ntmax = \"abc\"\n[sched]\npolicy = \"fastest\"\n" +
		"[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\n[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\n" +
		"[http]\nauth = \"none\"\n"
	testutil.WriteFile(t, p, []byte(doc), 0o600)
	code, out, errs := run("config", "check", p)
	if code != exitError || out != "" {
		t.Fatalf("exit %d, stdout %q; want 1 and nothing", code, out)
	}
	want := []string{
		"config: " + p + `:3:1: node.capacty: unknown key; did you mean "capacity"?`,
		"config: " + p + ":4:1: node.weight: want an integer, got a string",
		"config: " + p + `:6:1: cluster.tmax: want a duration such as "500ms", got "abc"`,
		"config: " + p + `:8: sched.policy: unknown policy "fastest"`,
		"config: " + p + `:13: device[1].name: duplicate device name "relay1" (first defined on line 10)`,
		p + ": 5 errors, 0 warnings",
	}
	got := strings.Split(strings.TrimSpace(errs), "\n")
	if len(got) != len(want) {
		t.Fatalf("stderr has %d lines, want %d:\n%s", len(got), len(want), errs)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, got[i], want[i])
		}
	}
}

// TestConfigCheckWarnings: warnings print with their line and do not fail.
func TestConfigCheckWarnings(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(dir, "token")
	testutil.WriteFile(t, token, []byte("s3cret\n"), 0o600)
	if err := os.Chmod(token, 0o644); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "ews.toml")
	testutil.WriteFile(t, p, []byte("[node]\nname = \"ews1\"\n[http]\ntoken_file = \""+token+"\"\n"), 0o600)
	code, out, errs := run("config", "check", p)
	if code != exitOK {
		t.Fatalf("exit %d, want 0: %s", code, errs)
	}
	if want := "config: " + p + ":4: http.token_file: warning: " + token + " is readable by others (mode 0644)"; !strings.Contains(errs, want) {
		t.Fatalf("stderr %q lacks %q", errs, want)
	}
	if !strings.Contains(out, p+": 1 warning (board ews1") || strings.Contains(out, ": ok") {
		t.Fatalf("stdout %q: want the warning count, not ok", out)
	}
}

// TestCheckAndRunAgree: for each file run refuses at config time, check
// prints every config line run printed, and exits 1 too, except for a
// secret file missing on this machine: a warning there, since check also
// runs where the SD card is written (flash.sh), not on the board.
func TestCheckAndRunAgree(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		testutil.WriteFile(t, p, []byte(body), 0o600)
		return p
	}
	emptyToken := write("empty-token", "\n")
	badKey := write("bad.key", "not a key\n")
	const loop = "[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\ngossip = \"127.0.0.1:0\"\n"
	tests := []struct {
		name, doc, want string
		warnOnly        bool // check: a warning, exit 0
	}{
		{"unknown key", loop + "[http]\nauth = \"none\"\ncolour = 1\n", "http.colour: unknown key", false},
		{"type", loop + "capacity = \"four\"\n[http]\nauth = \"none\"\n", "node.capacity: want an integer, got a string", false},
		{"duplicate key", loop + "name = \"ews2\"\n", "node.name: defined twice (first defined on line 2)", false},
		{"missing token file", loop + "[http]\ntoken_file = \"" + filepath.Join(dir, "nope") + "\"\n", "http.token_file: cannot read the token", true},
		{"empty token file", loop + "[http]\ntoken_file = \"" + emptyToken + "\"\n", "http.token_file: " + emptyToken + " is empty", false},
		{"missing key file", loop + "[http]\nauth = \"none\"\n[cluster]\nkey_file = \"" + filepath.Join(dir, "nokey") + "\"\n", "cluster.key_file: cannot read key", true},
		{"bad key file", loop + "[http]\nauth = \"none\"\n[cluster]\nkey_file = \"" + badKey + "\"\n", "cluster.key_file: " + badKey + ": key is not valid base64", false},
		{"bad bcrypt hash", loop + "[http]\nauth = \"basic\"\nusers = [\"u:$2a$nothash\"]\n", "http.users: auth: user \"u\"", false},
		{"mqtt password from the bundle", loop + "[http]\nauth = \"none\"\n[mqtt]\nbroker = \"127.0.0.1:1\"\nuser = \"u\"\npassword_file = \"/etc/ews/cluster.bundle\"\n",
			".toml:10: mqtt.password_file: \"/etc/ews/cluster.bundle\" is not under node.secrets_dir (/etc/ews/secrets)", false},
		{"gpio without pin", loop + "[http]\nauth = \"none\"\n[[device]]\nname = \"r\"\ndriver = \"gpio-out\"\n", "device[0].pin: device \"r\": driver gpio-out needs a pin", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := write(strings.ReplaceAll(tt.name, " ", "-")+".toml", tt.doc)
			rcode, _, rerr := run("run", "--config", p)
			ccode, _, cerr := run("config", "check", p)
			want := exitError
			if tt.warnOnly {
				want = exitOK
			}
			if rcode != exitError || ccode != want {
				t.Fatalf("run exit %d, check exit %d; want 1 and %d\nrun: %s\ncheck: %s", rcode, ccode, want, rerr, cerr)
			}
			if tt.warnOnly {
				if !strings.Contains(cerr, "warning: ") || !strings.Contains(cerr, "ews run refuses to start until it can read it") {
					t.Fatalf("check stderr %q: want a warning that run refuses", cerr)
				}
				cerr = strings.ReplaceAll(strings.ReplaceAll(cerr, "warning: ", ""), "; ews run refuses to start until it can read it", "")
			}
			if !strings.Contains(rerr, tt.want) {
				t.Fatalf("run stderr %q lacks %q", rerr, tt.want)
			}
			for _, line := range strings.Split(rerr, "\n") {
				if strings.HasPrefix(line, "config: ") && !strings.Contains(cerr, line) {
					t.Errorf("run refused with %q; check did not report it:\n%s", line, cerr)
				}
			}
		})
	}
}
