package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/sched"
)

// moduleRoot is the repository root, two levels above this package (cmd/benchpaper).
func moduleRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("no go.mod at %s: %v", root, err)
	}
	return root
}

// TestSmoke runs the harness end to end in --smoke mode (one policy, a tiny load, HAProxy when
// installed) against real `ews run` processes, and checks the report, the JSON of every cell,
// and that no child outlives the run.
func TestSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("smoke of the paper harness starts real boards; skipped with -short")
	}
	root := moduleRoot(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "ews")
	if err := buildEWS(root, bin); err != nil {
		t.Skipf("cannot build ews, so the harness cannot run: %v", err)
	}
	out := filepath.Join(dir, "bench-paper.md")
	args := []string{"--smoke", "--ews", bin, "--out", out, "--results", filepath.Join(dir, "results"), "--img", filepath.Join(dir, "img"), "--seed", "7"}
	opt, err := parseFlags(args, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	h, err := newHarness(opt, &stdout, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	runErr := h.run(ctx)
	h.close()
	if runErr != nil {
		t.Fatalf("run: %v\nstdout:\n%s\nstderr:\n%s", runErr, stdout.String(), stderr.String())
	}
	if n := h.procs.running(); n != 0 {
		t.Errorf("%d child processes still running after close", n)
	}
	for _, r := range h.rows {
		if r.FrontCPUPer1k < 0 || r.Rep.Total.Sent == 0 {
			t.Errorf("%s %s: sent %d, cpu %v", r.Scenario, r.Setup, r.Rep.Total.Sent, r.FrontCPUPer1k)
		}
		for _, cls := range []string{"control", "browse"} {
			if c := classOf(r.Rep, cls); c.OK == 0 {
				t.Errorf("%s %s: no %s request answered 2xx: %+v", r.Scenario, r.Setup, cls, c)
			}
		}
		if r.FrontRSSKB <= 0 {
			t.Errorf("%s %s: no RSS sampled", r.Scenario, r.Setup)
		}
		b, err := os.ReadFile(r.File)
		if err != nil {
			t.Fatal(err)
		}
		var v struct {
			Seed    uint64 `json:"seed"`
			Classes []struct {
				Name string `json:"name"`
			} `json:"classes"`
		}
		if err := json.Unmarshal(b, &v); err != nil || v.Seed != 7 || len(v.Classes) != 2 {
			t.Errorf("%s: seed %d, %d classes, err %v", r.File, v.Seed, len(v.Classes), err)
		}
	}
	want := []string{setupSingle, "priority-lc"}
	if haproxyPath() != "" {
		want = append(want, setupHAProxy, setupHAPrio)
	}
	for _, s := range want {
		if h.find(scPaper, s, 0.25, 0.1) == nil {
			t.Errorf("no row for setup %s; rows: %d", s, len(h.rows))
		}
	}
	md, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range append(want, "### Goals", "| priority-lc | 0.1x | 30 |", "Footprint") {
		if !strings.Contains(string(md), s) {
			t.Errorf("report lacks %q:\n%s", s, md)
		}
	}
	if pngs, _ := filepath.Glob(filepath.Join(dir, "img", "*.png")); len(pngs) == 0 {
		t.Error("no plot written")
	}
	if !strings.Contains(stdout.String(), "Goals:") {
		t.Errorf("stdout lacks the goals:\n%s", stdout.String())
	}

	// --render rebuilds the same tables from the results dir without running anything.
	out2 := filepath.Join(dir, "rendered.md")
	ropt, err := parseFlags(append(args, "--render", "--out", out2), &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	rh, err := newHarness(ropt, &bytes.Buffer{}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	defer rh.close()
	if err := rh.run(ctx); err != nil {
		t.Fatalf("render: %v", err)
	}
	md2, err := os.ReadFile(out2)
	if err != nil {
		t.Fatal(err)
	}
	tableOf := func(md []byte) string {
		_, rest, _ := strings.Cut(string(md), "### 3 equal boards")
		tbl, _, _ := strings.Cut(rest, "### Footprint")
		return tbl
	}
	if a, b := tableOf(md), tableOf(md2); a == "" || a != b {
		t.Errorf("rendered table differs:\n%s\nvs\n%s", a, b)
	}
}

func TestParseFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		ok   bool
	}{
		{"defaults", nil, true},
		{"quick", []string{"--quick"}, true},
		{"unknown policy", []string{"--policies", "priority-lc,fastest"}, false},
		{"bad ratio", []string{"--ratios", "0.25,1.5"}, false},
		{"bad load", []string{"--loads", "x"}, false},
		{"bad haproxy", []string{"--haproxy", "maybe"}, false},
		{"bad header", []string{"--header", "novalue"}, false},
		{"stray arg", []string{"extra"}, false},
		{"saturate", []string{"--saturate", "1000,2000", "--front-cpu", "0.2"}, true},
		{"saturate bad rate", []string{"--saturate", "1000,-5"}, false},
		{"saturate no cores", []string{"--saturate", "1000", "--front-cpu", "0"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseFlags(tc.args, &bytes.Buffer{})
			if (err == nil) != tc.ok {
				t.Errorf("parseFlags(%q) err = %v, want ok %v", tc.args, err, tc.ok)
			}
		})
	}
	o, err := parseFlags([]string{"--quick", "--token", "t0k"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.duration != 2*time.Second || len(o.ratios) != 1 || o.header.Get("Authorization") != "Bearer t0k" {
		t.Errorf("--quick --token: duration %v ratios %v auth %q", o.duration, o.ratios, o.header.Get("Authorization"))
	}
}

func TestConfigs(t *testing.T) {
	specs := equalBoards(3, 2, 20*time.Millisecond)
	if c := capacityOf(specs); c < 299.9 || c > 300.1 {
		t.Errorf("capacity of 3 × 2 slots / 20 ms = %v, want 300", c)
	}
	bs := []*board{{spec: specs[0], http: "127.0.0.1:1"}, {spec: specs[1], http: "127.0.0.1:2"}}
	for _, prio := range []bool{false, true} {
		cfg := haproxyConfig("127.0.0.1:9", bs, prio)
		has := strings.Contains(cfg, "set-priority-class int(-10) if { path_beg /api/devices /cgi-bin }")
		if has != prio || !strings.Contains(cfg, "balance leastconn") || !strings.Contains(cfg, "server ews2 127.0.0.1:2 maxconn 2") || !strings.Contains(cfg, "timeout queue 2s") {
			t.Errorf("prio %v:\n%s", prio, cfg)
		}
	}
}

// TestBoardConfigsParse holds the generated boot configs to the real config parser, for every
// policy, clustered and standalone, with and without a token.
func TestBoardConfigsParse(t *testing.T) {
	specs := equalBoards(3, 2, 20*time.Millisecond)
	specs[2].capacity, specs[2].weight, specs[2].pageLat = 1, 1, 0
	bs := make([]board, len(specs))
	for i := range bs {
		bs[i] = board{spec: specs[i], http: "127.0.0.1:" + string(rune('1'+i)) + "000", gossip: "127.0.0.1:" + string(rune('1'+i)) + "001"}
	}
	key := config.NewKey()
	for _, pol := range sched.PolicyNames() {
		for _, peers := range []bool{false, true} {
			for _, token := range []string{"", "s3cret"} {
				for i := range bs {
					data := boardConfig(bs, i, peers, pol, key, token, 4)
					cfg, err := config.Parse("gen.toml", []byte(data))
					if err != nil {
						t.Fatalf("policy %s peers %v token %q board %d: %v\n%s", pol, peers, token, i, err, data)
					}
					if cfg.Sched.Policy != pol || cfg.Node.Capacity != specs[i].capacity || cfg.Sim == nil || cfg.Sim.PageLatency.Duration != specs[i].pageLat {
						t.Errorf("board %d: policy %q capacity %d sim %+v", i, cfg.Sched.Policy, cfg.Node.Capacity, cfg.Sim)
					}
					if cfg.HTTP.MaxConnsPerClient != benchConnsPerClient {
						t.Errorf("max_conns_per_client %d: the generator's one address would be answered 429", cfg.HTTP.MaxConnsPerClient)
					}
					if len(cfg.Devices) != 4 || cfg.Devices[0].Node != "any" || cfg.Devices[0].Driver != "sim-sensor" {
						t.Errorf("devices %+v", cfg.Devices)
					}
				}
			}
		}
	}
}

// recorder is a RoundTripper that keeps the paths it was sent.
type recorder struct{ paths []string }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	r.paths = append(r.paths, req.URL.Path)
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
}

func TestSpread(t *testing.T) {
	rec := &recorder{}
	s := &spread{base: rec, n: 3}
	ctl, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:1/api/devices/s1/read", nil)
	page, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/", nil)
	for _, r := range []*http.Request{ctl, ctl, page, ctl, ctl} {
		if _, err := s.RoundTrip(r); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"/api/devices/s2/read", "/api/devices/s3/read", "/", "/api/devices/s1/read", "/api/devices/s2/read"}
	if strings.Join(rec.paths, " ") != strings.Join(want, " ") {
		t.Errorf("paths %v, want %v", rec.paths, want)
	}
	if ctl.URL.Path != "/api/devices/s1/read" {
		t.Errorf("the shared request template was changed: %s", ctl.URL.Path)
	}
	if n := deviceCount(3, 2); n < 6 {
		t.Errorf("deviceCount(3, 2) = %d: fewer devices than slots", n)
	}
}

func TestPolicyWithHeadroom(t *testing.T) {
	for _, tt := range []struct {
		in  string
		bad bool
	}{
		{"priority-lc+headroom=auto", false}, {"priority-lc+headroom=2", false},
		{"priority-lc+headroom=lots", true}, {"nosuch+headroom=2", true},
	} {
		_, err := parsePolicies(tt.in)
		if (err != nil) != tt.bad {
			t.Errorf("parsePolicies(%q) = %v, want bad %v", tt.in, err, tt.bad)
		}
	}
	pol, extra := schedExtra("priority-lc+headroom=2", nil)
	if pol != "priority-lc" || extra != "headroom = \"2\"\n\n" {
		t.Errorf("schedExtra = %q, %q", pol, extra)
	}
}
