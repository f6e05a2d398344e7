package config

import (
	"errors"
	"strings"
	"testing"
)

// [cgi]'s limits and user are checked with their file:line.
func TestCGIBadInput(t *testing.T) {
	tests := []struct {
		name     string
		doc      string
		line     int
		key, msg string
	}{
		{"zero cpu", "[cgi]\ncpu_seconds = 0\n", 2, "cgi.cpu_seconds", "at least 1"},
		{"tiny memory", "[cgi]\nmax_memory = 1000\n", 2, "cgi.max_memory", "at least 16 MiB"},
		{"negative processes", "[cgi]\nmax_processes = -1\n", 2, "cgi.max_processes", "at least 1"},
		{"memory as text", "[cgi]\nmax_memory = \"lots\"\n", 2, "cgi.max_memory", "want an integer"},
		{"root", "[cgi]\nuser = \"root\"\n", 2, "cgi.user", "not root"},
		{"ews itself", "[cgi]\nuser = \"ews\"\n", 2, "cgi.user", "the user ews runs as"},
		{"zero timeout", "[cgi]\ntimeout = \"0s\"\n", 2, "cgi.timeout", "must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("/boot/ews.toml", []byte(tt.doc))
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("accepted or not config.Errors: %v", err)
			}
			for _, e := range es {
				if e.Key == tt.key && strings.Contains(e.Msg, tt.msg) {
					if e.File != "/boot/ews.toml" || e.Line != tt.line {
						t.Fatalf("error at %s:%d, want line %d", e.File, e.Line, tt.line)
					}
					return
				}
			}
			t.Fatalf("no error for %s with %q in:\n%v", tt.key, tt.msg, err)
		})
	}
}

func TestCGIDefaultsAndKeys(t *testing.T) {
	cfg, err := Parse("x.toml", []byte("[http]\nauth = \"none\"\n[cgi]\nuser = \"ews-cgi\"\ncpu_seconds = 5\nmax_memory = 67108864\nmax_processes = 8\n"))
	if err != nil {
		t.Fatal(err)
	}
	if g := cfg.CGI; g.User != "ews-cgi" || g.CPUSeconds != 5 || g.MaxMemory != 64<<20 || g.MaxProcesses != 8 {
		t.Fatalf("cgi = %+v", g)
	}
	def, err := Parse("x.toml", []byte("[http]\nauth = \"none\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if g := def.CGI; g.User != "" || g.CPUSeconds != 10 || g.MaxMemory != 256<<20 || g.MaxProcesses != 32 {
		t.Fatalf("defaults = %+v", g)
	}
}

// `ews config check` looks the user up as `ews run` would.
func TestCGIUserMissing(t *testing.T) {
	cfg, err := Parse("/boot/ews.toml", []byte("[http]\nauth = \"none\"\n[cgi]\nuser = \"no-such-user-ews\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	errs, _ := cfg.CheckSecrets()
	if len(errs) != 1 || errs[0].Key != "cgi.user" || errs[0].Line != 4 || !strings.Contains(errs[0].Msg, "adduser") {
		t.Fatalf("errs = %v", errs)
	}
}
