package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ews-firmware/ews/cmd/benchpaper/testbed"
)

// 003's scheme 3 on real boards (issue 51 item 4; docs/NOTES.md "003's
// scheme 3 on real boards"): three sites of two `ews run` boards each on
// the emulated network (netdist.go), one site hot (60 % of the clients),
// so its boards fill and placements must spill. Each board measures its
// round trip to its clients from TCP_INFO on the connections it accepts
// (node/clientrtt) and gossips its nearest networks; the master's learned
// rule ranks boards by them. Setups: learned (integrated, one learned
// rule), static (integrated, the paper's table per site) and lc.
const (
	s3Sites   = 3
	s3PerSite = 2
	s3Slots   = 4
	s3Page    = 80 * time.Millisecond
	// s3Pause is the wait between the clients' connect timing (5 connects
	// to every board, which every board measures) and the run: the boards
	// publish every second and gossip carries it to the master.
	s3Pause = 2 * time.Second
)

// s3Share is each site's share of the clients: site A is hot.
var s3Share = []float64{0.6, 0.2, 0.2}

// s3Clients is each site's closed-loop clients at load f: f of the whole
// cluster's capacity, shared as s3Share.
func s3Clients(f float64) []int {
	capacity := float64(s3Sites*s3PerSite*s3Slots) / s3Page.Seconds()
	total := f * capacity * (netThink + s3Page + netNear).Seconds()
	out := make([]int, len(s3Share))
	for i, sh := range s3Share {
		out[i] = max(1, int(math.Round(total*sh)))
	}
	return out
}

// s3Schedule is a setup's policy and [sched] tables.
func s3Schedule(setup string, n *netDist) (policy, tables string) {
	limit := fmt.Sprintf("[sched.integrated.limits]\nrt = %d.0\n\n", netRTLimit)
	switch setup {
	case "static":
		var s strings.Builder
		for site := 1; site <= s3Sites; site++ {
			var near []string
			for _, b := range n.boards {
				if b.site == site {
					near = append(near, fmt.Sprintf("%q", b.name))
				}
			}
			fmt.Fprintf(&s, "[[sched.proximity]]\ncidr = %q\nprefer = [%s]\n\n", siteCIDR(n.subnet, site), strings.Join(near, ", "))
		}
		return "integrated", limit + s.String()
	case "learned":
		return "integrated", limit + "[[sched.proximity]]\ncidr = \"0.0.0.0/0\"\n\n"
	}
	return setup, ""
}

// s3View is the part of the master's GET /api/cluster this cell reads:
// the networks each board reported.
type s3View struct {
	Nodes []struct {
		Name       string `json:"name"`
		ClientNets []struct {
			Net   string  `json:"net"`
			RTTMs float64 `json:"rtt_ms"`
		} `json:"client_nets"`
	} `json:"nodes"`
}

// s3RunOut is one run: the combined result, the sites' reports, and the
// master's dynamic table halfway (board -> net -> rtt ms).
type s3RunOut struct {
	res   testbed.Result
	sites []netClientsResult
	table map[string]map[string]float64
}

// s3Run starts the cluster for setup, runs every site's clients at once
// (each site's at its first board) for window and stops the cluster.
func (h *harness) s3Run(ctx context.Context, n *netDist, setup string, clients []int, seed uint64, window time.Duration, dir string) (s3RunOut, error) {
	policy, tables := s3Schedule(setup, n)
	out := s3RunOut{table: map[string]map[string]float64{}}
	run, err := h.runNet(ctx, n, netPlan{cell: "scheme 3", setup: setup, policy: policy, tables: tables, perSite: s3PerSite, slots: s3Slots,
		page: s3Page, pause: s3Pause, clients: clients, seed: seed, window: window, dir: dir, halfway: func(body []byte) {
			var v s3View
			if json.Unmarshal(body, &v) != nil {
				return
			}
			for _, b := range v.Nodes {
				for _, cn := range b.ClientNets {
					if out.table[cn.Net] == nil {
						out.table[cn.Net] = map[string]float64{}
					}
					out.table[cn.Net][b.Name] = cn.RTTMs
				}
			}
		}})
	if err != nil {
		return s3RunOut{}, err
	}
	out.res, out.sites = run.res, run.sites
	return out, nil
}

// s3TableText is the master's dynamic table as a line: per site network,
// the boards by reported round trip.
func s3TableText(n *netDist, table map[string]map[string]float64) string {
	var rows []string
	for site := 1; site <= s3Sites; site++ {
		cidr := siteCIDR(n.subnet, site)
		var cells []string
		for _, b := range n.boards {
			if v, ok := table[cidr][b.name]; ok {
				cells = append(cells, fmt.Sprintf("%s %.0f", b.name, v))
			}
		}
		rows = append(rows, fmt.Sprintf("%s (%s): %s", siteName(site), cidr, strings.Join(cells, ", ")))
	}
	return strings.Join(rows, "; ")
}

// netScheme3 is the cell: every load, every setup, interleaved; or "not
// testable here" with the reason.
func (h *harness) netScheme3(ctx context.Context, t *tbHarness) error {
	const claim = "proximity learned from the boards' TCP round trips to their clients (scheme 3) serves clients faster than lc (real boards, three sites 5/80 ms, one hot)"
	fmt.Fprintf(&t.md, "### 003 — scheme 3 on real boards: the dynamic proximity table from TCP_INFO (three sites, one hot)\n\n")
	fmt.Fprintf(&t.md, "> 方案3:動態就近表的建立與使用動態就近表，可以仿照路由器的動態路由表的建立方式，通過動態學習的方式取得。當一個用戶請求到達調度服務器時，調度服務器會通知集群中的各應用服務器，請他們檢查各自站點到該用戶的網絡往返時延。各應用服務器檢測後，將結果發回調度服務器，調度服務器從中選擇最短時間對應的3個服務器做為推薦就近服務器，並由此建立動態就近表。\n\n")
	if why := netProbe(); why != "" {
		fmt.Fprintf(&t.md, "Not run: %s.\n\n", why)
		t.verdict("003", claim, "not-testable", "reason="+spaceless(why))
		return nil
	}
	dir, err := os.MkdirTemp(h.tmp, "net003s3-")
	if err != nil {
		return fmt.Errorf("paper: %w", err)
	}
	n, err := newNetDistSites(ctx, h.procs, dir, s3Sites, s3PerSite, netNear, netFar)
	defer n.close()
	if err != nil {
		why := "the emulated network could not be made: " + err.Error()
		fmt.Fprintf(&t.md, "Not run: %s.\n\n", why)
		t.verdict("003", claim, "not-testable", "reason="+spaceless(why))
		return nil
	}
	loads, reps, window := []float64{0.25, 0.6, 0.9}, 1, 10*time.Second
	if !t.quick {
		loads, reps, window = []float64{0.25, 0.4, 0.6, 0.75, 0.9}, 3, 15*time.Second
	}
	setups := []string{"learned", "static", "lc"}
	fmt.Fprintf(&t.md, "Experiment: 6 `ews run` processes (capacity %d, %v pages, `mode = \"redirect\"`) on three sites of two (ews1–2 site A, ews3–4 B, ews5–6 C), each site's closed-loop clients (think %v, following 307s and keeping their assignment) at the site's first board, all in network namespaces routed through one router namespace (%s); round trip %v within a site, %v between sites. Site A is hot: %.0f %% of the clients, so at high load its two boards fill and placements spill. Load = share of the whole cluster's capacity (6 × %d slots / %v). *learned* = `integrated` with one `[[sched.proximity]] cidr = \"0.0.0.0/0\"` without `prefer`: every board takes the round trip of each connection it accepts from `TCP_INFO` (the handshake's, per client /24), gossips its 8 nearest networks, and the master recommends for a client the three boards with the shortest reported round trip to its network (the paper's scheme 3; `node/clientrtt`, `state/nearnet`); *static* = the paper's table naming each site's two boards; *lc* ignores distance. Both proximity setups set `[sched.integrated.limits] rt = %d` as the network cell above. Before each run every site's clients time 5 TCP connects to every board (the harness's connect timing) and wait %v: those accepts are each board's first measurement of the site, the stand-in for the paper's servers checking their round trip to the user when the dispatcher asks. Each cell runs every setup %d time(s), interleaved, %v measured. Rule: learned wins against lc (mean, p99, completed/s beyond the spread, worse on none) at every load; partly at some.\n\n",
		s3Slots, s3Page, netThink, n.how, netNear, netFar, 100*s3Share[0], s3Slots, s3Page, netRTLimit, s3Pause, reps, window)
	fmt.Fprintf(&t.md, "Machine load at the start of this experiment: %s (2 cores shared with other engineers' builds and tests).\n\n", loadAvg())
	wins, note, tableNote := 0, "", ""
	for _, f := range loads {
		clients := s3Clients(f)
		c := &tbCell{res: map[string][]testbed.Result{}, setups: setups}
		siteMean := map[string][][]float64{}
		for rep := 1; rep <= reps; rep++ {
			for _, s := range setups {
				rd := filepath.Join(dir, fmt.Sprintf("%s-%.2f-r%d", s, f, rep))
				if err := os.MkdirAll(rd, 0o755); err != nil {
					return fmt.Errorf("paper: %w", err)
				}
				fmt.Fprintf(h.out, "== 003 scheme 3: %s, load %.2f (clients %v), round %d\n", s, f, clients, rep)
				out, err := h.s3Run(ctx, n, s, clients, uint64(rep), window, rd)
				if err != nil {
					return err
				}
				fmt.Fprintf(h.out, "   mean %.1f ms, p99 %.0f ms, %.1f/s, failed %.2f%%\n", out.res.Mean, out.res.P99, out.res.PerSec, out.res.ShedPct)
				t.cells++
				c.res[s] = append(c.res[s], out.res)
				if siteMean[s] == nil {
					siteMean[s] = make([][]float64, s3Sites)
				}
				for i, site := range out.sites {
					siteMean[s][i] = append(siteMean[s][i], site.Report.Total.Latency.Mean)
				}
				if s == "learned" && len(out.table) > 0 {
					tableNote = s3TableText(n, out.table)
				}
			}
		}
		fmt.Fprintf(&t.md, "Load %.2f (clients %v per site A/B/C):\n\n", f, clients)
		t.table(c, "redirect, real boards", "", nil)
		fmt.Fprintf(&t.md, "| setup | site A mean ms | site B mean ms | site C mean ms |\n|---|--:|--:|--:|\n")
		for _, s := range setups {
			var cols []string
			for i := range s3Sites {
				st := statOf(siteMean[s][i])
				cols = append(cols, fmt.Sprintf("%.1f (%.1f)", st.mean, st.spread()))
			}
			fmt.Fprintf(&t.md, "| %s | %s |\n", s, strings.Join(cols, " | "))
		}
		fmt.Fprintln(&t.md)
		t.plotCell("bench-paper-net-003scheme3", "003 scheme 3: three sites 5/80 ms, one hot (real boards, redirect), mean latency", c, f)
		t.xlabel("bench-paper-net-003scheme3", "load (share of the cluster's capacity)")
		w, text := versus(c, "learned", []string{"lc"})
		wins += w
		note += fmt.Sprintf(" at%.2f:%s;%s", f, spaceless(text), figs(c, "learned", "static", "lc"))
		fmt.Fprintf(&t.md, "At %.2f: %s.\n\n", f, text)
	}
	if tableNote == "" {
		tableNote = "none reported (no board measured a client)"
	}
	fmt.Fprintf(&t.md, "The master's dynamic table halfway through the last learned run (`client_nets` of `/api/cluster`, ms): %s.\n\n", tableNote)
	t.verdict("003", claim, winWord(wins, len(loads)), fmt.Sprintf("wins=%d/%d net=%s%s", wins, len(loads), spaceless(n.how), note))
	return nil
}
