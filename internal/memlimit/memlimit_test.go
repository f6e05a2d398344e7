package memlimit

import (
	"math"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

func TestSet(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1)) // put back what the test process had
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		testutil.WriteFile(t, p, []byte(body), 0o600)
		return p
	}
	noEnv := func(string) string { return "" }
	tests := []struct {
		name      string
		meminfo   string
		env       func(string) string
		wantLimit int64
		why       string
	}{
		{"a 64 MB XScale board", write("64", "MemTotal:          61440 kB\nMemFree: 1 kB\n"), noEnv, 61440 << 10 / 2, "half"},
		{"a 32 MB board", write("32", "MemFree: 1 kB\nMemTotal: 30720 kB\n"), noEnv, 30720 << 10 / 2, "half"},
		{"a Pi with 1 GB", write("1g", "MemTotal: 948304 kB\n"), noEnv, 0, "no limit"},
		{"GOMEMLIMIT set", write("env", "MemTotal: 30720 kB\n"), func(k string) string { return map[string]string{"GOMEMLIMIT": "20MiB"}[k] }, 0, "environment"},
		{"no MemTotal", write("none", "MemFree: 1 kB\n"), noEnv, 0, "no MemTotal"},
		{"a bad MemTotal", write("bad", "MemTotal: lots kB\n"), noEnv, 0, "MemTotal \"lots kB\""},
		{"no file", filepath.Join(dir, "missing"), noEnv, 0, "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			debug.SetMemoryLimit(math.MaxInt64)
			d := Set(tt.meminfo, tt.env)
			if d.Limit != tt.wantLimit || !strings.Contains(d.Why, tt.why) {
				t.Fatalf("%+v, want limit %d and %q", d, tt.wantLimit, tt.why)
			}
			got := debug.SetMemoryLimit(-1)
			if want := map[bool]int64{true: tt.wantLimit, false: math.MaxInt64}[tt.wantLimit > 0]; got != want {
				t.Fatalf("runtime limit %d, want %d", got, want)
			}
		})
	}
}
