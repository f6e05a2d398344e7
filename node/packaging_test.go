package node

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

// metricRef is a series name in a query or a rule: ews's, the Go runtime's
// and the process's.
var metricRef = regexp.MustCompile(`\b(?:ews|go|process)_[a-z0-9_]+\b`)

// TestPackagingMetricsExist: the Grafana dashboard and the Prometheus
// alert rules in packaging/ query only series a running board exports
// (a histogram's _bucket, _sum and _count included), besides Prometheus'
// own `up`; the dashboard is valid JSON with a query in every panel
// (docs/NOTES.md "Monitoring"). A renamed metric fails here, not on a
// user's silent dashboard.
func TestPackagingMetricsExist(t *testing.T) {
	cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\n[http]\nauth = \"none\"\n"+
		"[[device]]\nname = \"relay\"\ndriver = \"sim-switch\"\n"+
		"[[device]]\nname = \"probe\"\ndriver = \"command\"\ncommand = [\"/bin/false\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, base, _, _ := startNode(t, cfg)
	// a toggle and a failed read: the device series exist once used
	for _, p := range []string{"/api/devices/relay/toggle", "/api/devices/probe/read"} {
		resp, err := http.Post(base+p, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	types, _, _ := scrape(t, base)
	exported := func(name string) bool {
		if _, ok := types[name]; ok {
			return true
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if b, ok := strings.CutSuffix(name, suffix); ok && types[b] == "histogram" {
				return true
			}
		}
		return false
	}

	raw, err := os.ReadFile("../packaging/grafana/ews-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("ews-dashboard.json: %v", err)
	}
	queries := map[string]string{}
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q: no query", p.Title)
		}
		for _, q := range p.Targets {
			queries["dashboard panel "+p.Title] += q.Expr + "\n"
		}
	}
	for _, f := range []string{"../packaging/prometheus/ews-alerts.yml", "../packaging/prometheus/ews-alerts.test.yml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		queries[f] = string(b)
	}
	used := 0
	for where, text := range queries {
		for _, name := range slices.Compact(metricRef.FindAllString(text, -1)) {
			used++
			if !exported(name) {
				t.Errorf("%s: %s is not a series ews exports", where, name)
			}
		}
	}
	for _, must := range []string{"up{", "ews_cluster_is_master", "ews_sched_shed_total", "ews_device_errors_total"} {
		if !strings.Contains(queries["../packaging/prometheus/ews-alerts.yml"], must) {
			t.Errorf("the alert rules do not use %s", must)
		}
	}
	t.Logf("%d panels, %d series references checked against %d exported families", len(dash.Panels), used, len(types))
}
