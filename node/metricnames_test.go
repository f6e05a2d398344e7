package node

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
)

// scrape reads base/metrics and returns the families it declares
// ("# TYPE name type") with their type, and for each family the sorted
// label names its samples carry (le of histogram buckets left out).
func scrape(t *testing.T, base string) (types map[string]string, labels map[string][]string, text string) {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d, %v", resp.StatusCode, err)
	}
	types, labels = map[string]string{}, map[string][]string{}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "# TYPE "); ok {
			name, typ, _ := strings.Cut(rest, " ")
			types[name] = typ
			continue
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		series, _, _ := strings.Cut(line, " ")
		name, rest, _ := strings.Cut(series, "{")
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && types[base] == "histogram" {
				name = base
			}
		}
		for _, pair := range strings.Split(strings.TrimSuffix(rest, "}"), ",") {
			l, _, ok := strings.Cut(pair, "=")
			if ok && l != "le" && !slices.Contains(labels[name], l) {
				labels[name] = append(labels[name], l)
				slices.Sort(labels[name])
			}
		}
	}
	return types, labels, string(b)
}

// TestMetricNames pins what a standalone board with one device exposes on
// /metrics after a few requests: every ews_* family with its type and label
// names, and the Go runtime and process series that dashboards and the
// end-to-end tests read. A rename, a changed type or label fails here.
func TestMetricNames(t *testing.T) {
	cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\n[http]\nauth = \"none\"\n"+
		"[[device]]\nname = \"relay\"\ndriver = \"sim-switch\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, base, _, _ := startNode(t, cfg)
	for _, r := range []struct{ method, path string }{
		{"GET", "/healthz"}, {"GET", "/api/devices"}, {"POST", "/api/devices/relay/toggle"}, {"GET", "/metrics"},
	} {
		if code, _, _ := send(t, r.method, base+r.path, nil, nil); code != http.StatusOK {
			t.Fatalf("%s %s = %d", r.method, r.path, code)
		}
	}
	types, labels, text := scrape(t, base)
	if os.Getenv("EWS_METRICS_DUMP") != "" {
		t.Log(text)
	}
	want := []struct {
		name, typ string
		labels    []string
	}{
		{"ews_audit_dropped_total", "counter", nil}, // audit log
		{"ews_audit_entries_total", "counter", nil},
		{"ews_build_info", "gauge", []string{"commit", "goarch", "goarm", "goversion", "version"}},
		{"ews_cluster_epoch", "gauge", nil},
		{"ews_cluster_is_master", "gauge", nil},
		{"ews_cluster_messages_received_total", "counter", []string{"type"}},
		{"ews_cluster_messages_refused_total", "counter", []string{"type"}},
		{"ews_cluster_messages_sent_total", "counter", []string{"type"}},
		{"ews_cluster_table_version", "gauge", nil},
		{"ews_cluster_takeovers_total", "counter", nil},
		{"ews_cluster_wire_bytes_sent_total", "counter", nil},
		{"ews_device_operation_seconds", "histogram", []string{"device"}},
		{"ews_device_operations_total", "counter", []string{"action", "device"}},
		{"ews_dispatch_added_seconds", "histogram", nil},
		{"ews_dispatch_assigned_total", "counter", nil}, // redirect mode
		{"ews_dispatch_holding", "gauge", nil},
		{"ews_dispatch_placed_total", "counter", []string{"outcome"}}, // a follower's fast entry
		{"ews_dispatch_placements_total", "counter", nil},             // placements answered as master
		{"ews_dispatch_retries_total", "counter", nil},
		{"ews_history_disk_full", "gauge", nil},             // device history
		{"ews_history_dropped_bytes_total", "counter", nil}, // device history
		{"ews_history_file_bytes", "gauge", nil},            // device history
		{"ews_history_points_total", "counter", nil},        // device history
		{"ews_history_write_errors_total", "counter", nil},  // device history
		{"ews_history_written_bytes_total", "counter", nil}, // device history
		{"ews_http_in_flight", "gauge", nil},
		{"ews_http_request_duration_seconds", "histogram", []string{"path"}},
		{"ews_http_requests_total", "counter", []string{"code", "path"}},
		{"ews_sched_dispatch_total", "counter", []string{"board", "class"}},
		{"ews_sched_linknum", "gauge", []string{"board"}},
		{"ews_sched_queue_depth", "gauge", []string{"class"}},
		{"ews_sched_queue_wait_seconds", "histogram", []string{"class"}},
		{"ews_sched_shed_total", "counter", []string{"class", "reason"}},
	}
	var got []string
	for name := range types {
		if strings.HasPrefix(name, "ews_") {
			got = append(got, name)
		}
	}
	slices.Sort(got)
	var names []string
	for _, w := range want {
		names = append(names, w.name)
		if types[w.name] != w.typ {
			t.Errorf("%s: type %q, want %q", w.name, types[w.name], w.typ)
		}
		if !slices.Equal(labels[w.name], w.labels) {
			t.Errorf("%s: labels %q, want %q", w.name, labels[w.name], w.labels)
		}
	}
	if !slices.Equal(got, names) {
		t.Errorf("ews_* families\n got %q\nwant %q", got, names)
	}
	for _, name := range []string{
		"go_goroutines", "go_threads", "go_info", "go_gc_duration_seconds",
		"go_memstats_alloc_bytes", "go_memstats_alloc_bytes_total", "go_memstats_heap_alloc_bytes", "go_memstats_sys_bytes",
		"process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
		"process_start_time_seconds", "process_open_fds", "process_max_fds",
	} {
		if _, ok := types[name]; !ok {
			t.Errorf("no %s", name)
		}
	}
	for _, series := range []string{
		`ews_http_requests_total{code="200",path="health"} 1`,
		`ews_device_operations_total{action="toggle",device="relay"} 1`,
		`ews_http_request_duration_seconds_bucket{path="health",le="+Inf"} 1`,
		`ews_http_request_duration_seconds_bucket{path="health",le="0.001"} `,
		`ews_dispatch_added_seconds_bucket{le="5e-05"} `,
	} {
		if !strings.Contains(text, series) {
			t.Errorf("metrics lack %q", series)
		}
	}
}
