package config

import (
	"strings"
	"testing"
)

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
