package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// The papers' claims, quoted from ../shared/seeds/ (the extraction's pinyin
// annotations such as "負(fù)載" dropped), each with a translation.
const (
	quote000 = "在圖5中,把本文提出的由3臺性能相同的EWS 構成的嵌入式Web 服務器集群系統與單個嵌入式Web 服務器系統,在高訪問負荷下的處理能力做了比較,從圖5中可以看出,前者在測試時刻點處理完成的請求總數明顯高于后者。……測試了高優先級訪問數量在總訪問數量中所占比例為25%和50%兩種情況下的數據,在這兩種情況下,本文提出的基于訪問優先級的最少連接數算法,在單位時間內處理完成的高優先級請求數量均高于傳統的最少連接數算法。"
	trans000 = "Under high load, the cluster of 3 equal EWS completes clearly more requests than a single EWS; with 25% and 50% high-priority requests, the priority-based least-connections algorithm completes more high-priority requests per unit time than traditional least connections."
	quote001 = "在中低負載下，四種算法的效率相差不大，但在中高負載和重負載下，隨著請求強度的增大，根據服務器負載狀態自適應調度算法具有更好的效率。" +
		"（吞吐率定義為平均每秒處理的請求個數，平均應答延遲定義為從建立連接到應答結束之間的時間。）"
	trans001 = "At low and medium load the four algorithms (RR, LC, WLC, adaptive) differ little, but at medium-high and heavy load, as the request intensity grows, the adaptive algorithm driven by the servers' load is more efficient. (Measured as throughput, requests completed per second, and mean response delay.)"
	form001  = "load[i]=∑ri[j]*wj … if(MaxLoadValue>管理闕值) stop Server[i] 一定時間"
	quote002 = "系統負載均衡的粒度定為用戶,應用于內容相關性較強的WEB服務器系統,可以取得較好的負載均衡效果。"
	trans002 = "With the user as the granularity of load balancing, a web server system whose content is strongly correlated gets a better balancing effect (one server answers all of a user's requests)."
	quote003 = "調度服務器僅在服務的最初進行任務分配，在服務的過程中，流量將不再經過調度服務器，從而大大降低調度服務器的負載，避免其成為整個系統的瓶頸。"
	trans003 = "The dispatcher assigns the task only at the start of the service; during the service the traffic no longer passes through it, which greatly lowers its load and keeps it from becoming the bottleneck of the whole system (HTTP redirect)."
	quote004 = "当负荷较重时，最为有效的就是 QSC负载均衡算法；当负荷较低时，三种策略有效性基本相同。当介质负载时，随机策略的响应时间最长，最小连接策略次之，QSC 负载均衡算法响应时间最短，这是由于请求内容能够精准识别并考虑到服务器的异构性。"
	trans004 = "Under heavy load QSC is the most effective; under low load the three strategies are about equal. At medium load random has the longest response time, least connections the next, QSC the shortest, because it recognises the request content and accounts for the servers' heterogeneity."
	form004  = "Load(j)=Σ R(i)j·w(i) (eq. 1–3); eq. 4 compares each board with the first (C, M use over P1, P2 capacity, request load R, network N; weights start at 1); a board is drawn with probability (1/Wᵢ)/Σ 1/Wⱼ"
)

// claimRule is the rule the claim verdicts of 001 and 004 follow.
const claimRule = "Each cell runs %d times (seeds %d, %d, …)%s. A gap between two setups counts when it is larger than the run-to-run spread (max − min over the repetitions) of either setup. The claimed policy **wins** against a baseline at a load when it is better on mean latency or on completed/s by a gap that counts and worse on neither by one. Verdict: **reproduced** when it wins against every baseline at every load run, **partly** when it wins some of these comparisons, **not reproduced** when it wins none."

// paper000 decides 000 from the paper scenario's rows.
func (h *harness) paper000() (string, string) {
	hi := slices.Max(h.opt.loads)
	cl, one := h.peak(scPaper, "priority-lc"), h.peak(scPaper, setupSingle)
	var notes []string
	scale := cl > 2*one && one > 0
	notes = append(notes, fmt.Sprintf("3 boards complete %.1f/s at their peak vs one board's %.1f/s (%.2f×; rule: more than 2×)", cl, one, cl/max(one, 1e-9)))
	prio, n := 0, 0
	for _, ratio := range h.opt.ratios {
		p, l := h.find(scPaper, "priority-lc", ratio, hi), h.find(scPaper, "lc", ratio, hi)
		if p == nil || l == nil {
			continue
		}
		n++
		a, b := classOf(p.Rep, "control").OKPerSec, classOf(l.Rep, "control").OKPerSec
		if a > 1.1*b {
			prio++
		}
		notes = append(notes, fmt.Sprintf("at %.0f%% control and %s: priority-lc completes %.1f control/s vs lc's %.1f (rule: more than 1.1×)", ratio*100, loadName(hi), a, b))
	}
	switch {
	case one == 0 || n == 0:
		return "not run", "single or lc not run"
	case scale && prio == n:
		return "reproduced", strings.Join(notes, "; ")
	case scale || prio > 0:
		return "partly", strings.Join(notes, "; ")
	}
	return "not reproduced", strings.Join(notes, "; ")
}

// paper002 decides 002 from the assign scenario: the mechanism (each client
// served by its one board) is measurable; its benefit is not (below).
func (h *harness) paper002() (string, string) {
	d := h.directShare()
	if d < 0 {
		return "not run", "the assign scenario did not run"
	}
	fig := fmt.Sprintf("in redirect mode at least %.1f%% of every cell's requests went straight to the client's own board", 100*d)
	if d >= 0.9 {
		return "partly", fig + " (rule: ≥ 90%: the per-user granularity holds); the benefit the paper names, less data retrieval when one server answers a user's correlated content, does not exist on simulated boards, so it is not measured: at most partly"
	}
	return "not reproduced", fig + " (rule: ≥ 90%)"
}

// papers writes one section per paper: claim, experiment, result, verdict.
func (h *harness) papers(w io.Writer) {
	fmt.Fprintln(w, "### The papers' claims, tested")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Quotes are from the papers' text in `shared/seeds/` (the extraction's pinyin annotations such as 負(fù)載 removed). Each verdict is computed from this run's cells by the rule stated with it.")
	fmt.Fprintln(w)
	var s strings.Builder

	// 000
	word, why := h.paper000()
	fmt.Fprintf(&s, "#### 000 — priority least connections on embedded web servers: **%s**\n\n> %s\n\n*%s*\n\n", word, quote000, trans000)
	fmt.Fprintf(&s, "Experiment: the paper's own (\"3 equal boards, …\" tables below): 3 equal boards against one board at the same rates, and priority-lc against lc at %s control. Rule: reproduced when 3 boards complete more than 2× one board's requests/s at their peak and priority-lc completes more than 1.1× lc's control requests/s at the highest load at every control share; partly when one of the two holds. Result: %s.\n\n", ratioList(h.opt.ratios), why)

	// 001
	l001 := h.claimLoadsRun(scClaim001)
	word, why = h.claimVerdict(scClaim001, "adaptive", claim001Setups[1:], l001)
	fmt.Fprintf(&s, "#### 001 — adaptive scheduling by server load: **%s**\n\n> %s\n\n*%s*\n\nFormula (§3.1): `%s` — implemented in `sched/policy_adaptive.go`: load = Σ share × weight over cpu, network, memory; only the most loaded board is stopped, and only while its load is over the threshold (0.9 × the largest weight: a board with one resource 90%% busy crosses it).\n\n", word, quote001, trans001, form001)
	fmt.Fprintf(&s, "Experiment: %d equal boards (%d slots, %v pages and device reads), the last one busy half the time (`busy_for = %q`, `busy_every = %q`, `busy_cpu = 0.9`: 10× slower and 90%% cpu while busy), %.0f%% control, at %s of the nominal capacity (the paper's medium-high and heavy load), %v cells. Every setup queues in arrival order (`[sched] order = \"arrival\"`), as the paper's baselines do, so only the choice of board differs; adaptive runs with `suspend = %q` (the paper stops the most loaded server for \"一定時間\", a certain time, then measures again: its measuring interval is 15 s; here boards report every 100 ms and a busy window lasts 1.5 s, and a stop of 1 s held the busy board up to 0.8 s past each window). *busy share* = the busy board's part of the master's dispatches.\n\n",
		h.opt.boards, h.opt.capacity, h.opt.latency, busyFor.String(), busyEvery.String(), 100*h.opt.ratios[0], loadsText(l001), h.claimDuration(), adaptiveSuspend.String())
	fmt.Fprintf(&s, claimRule+"\n\n", h.opt.repeats, h.opt.seed, h.opt.seed+1, h.roundsNote(scClaim001))
	h.claimTable(&s, scClaim001, claim001Setups, l001, "busy share")
	fmt.Fprintf(&s, "Result: %s.%s%s\n\n", why, h.why001(l001, word), h.noisyNote(scClaim001, claim001Setups, l001))

	// 002
	word, why = h.paper002()
	fmt.Fprintf(&s, "#### 002 — a user's own server: **%s**\n\n> %s\n\n*%s*\n\nExperiment: the redirect-vs-proxy scenario under 003: in `mode = \"redirect\"` each simulated client is assigned one board and sends it every request until the assignment ends (`sched.sticky = \"cookie\"` keeps a user on one board the same way, through the master). Rule: partly when at least 90%% of the requests of every redirect cell went straight to the client's board. Result: %s.\n\n", word, quote002, trans002, why)

	// 003
	word, why = h.assignVerdict()
	fmt.Fprintf(&s, "#### 003 — the dispatcher out of the data path (HTTP redirect): **%s**\n\n> %s\n\n*%s*\n\n", word, quote003, trans003)
	capNote := fmt.Sprintf("the master's process is held to %.2f cores by a cgroup CPU quota (`--assign-cpu`: a board-class master; the boards and the generator are not held)", h.opt.assignCPU)
	if h.assignUncapped != "" {
		capNote = "the master ran **without** a CPU quota (" + h.assignUncapped + "): on this machine the generator and the boards share its cores"
	}
	fmt.Fprintf(&s, "Experiment: in one run, clusters of %s boards (capacity %d, %v pages, browse requests only), each started twice: `mode = \"proxy\"` (the master forwards every request) and `mode = \"redirect\"` (the master answers a client's first request with a 307 and a signed assignment, `X-Ews-Assign`; the client then sends its requests straight to its board). The generator plays %d clients, each from its own loopback address, following 307s and keeping its assignment (`internal/tool/bench`, as `ews bench --clients N`); %s. Rule: reproduced when at every cluster size redirect mode completes more than %.0f%% more requests/s than proxy mode at the highest rate and the master spends at most half the CPU per 1,000 completed requests; partly when one of these holds.\n\n",
		intList(h.opt.assignBoards), assignSlots, assignPageLat, h.opt.assignClients, capNote, 100*assignMargin)
	h.assignTable(&s)
	fmt.Fprintf(&s, "Result: %s.\n\n", why)
	fmt.Fprintln(&s, "What redirect mode gives up: a request sent straight to its board never enters the master's queue, so the priority order across clients (control before pages, invariant 4) holds only among the requests the master still queues (first requests, clients sent back). A board serves its assigned clients in arrival order and sends them back (307, `X-Ews-Back: full`) when it is at its capacity; the master's least-connections view stays true because each board reports its own in-flight requests. When to choose: `proxy` (the default) when control requests must overtake page views across all users, when clients cannot follow a 307 or reach the boards' addresses, or when the master is not the ceiling (few boards, slow pages); `redirect` when many clients browse and the master's forwarding is the ceiling (its CPU, its network link), when the boards are reachable by the clients, and when per-client order is enough.")
	fmt.Fprintln(&s)

	// 004
	l004 := h.claimLoadsRun(scClaim004)
	w1, why1 := h.claimVerdict(scClaim004, "qsc", claim004Setups[1:], l004)
	w2, why2 := h.claimVerdict(scClaim004FIFO, "qsc", claim004FIFOSetups[1:], h.claimLoadsRun(scClaim004FIFO))
	word = combine(w1, w2)
	why = fmt.Sprintf("with the priority queue, %s; in arrival order, %s", why1, why2)
	fmt.Fprintf(&s, "#### 004 — QSC, request classes weighted: **%s**\n\n> %s\n\n*%s*\n\nFormula: %s — implemented in `sched/policy_qsc.go` (eq. 4 reconstructed, see NOTES).\n\n", word, quote004, trans004, form004)
	fmt.Fprintf(&s, "Experiment: %d boards of unequal speed, as the paper's heterogeneous servers (`[sim] speed` 2 / 1 / 0.5, `cpu_mhz` 8000 / 4000 / 2000, `mem_mb` 2048 / 1024 / 256), the paper's four classes with weights 1, 2, 4, 8 (`[[sched.class]]`: control = execution unit 2, media 8, dynamic 4, static = publish 1) and costs in the same proportion: 40%% static `GET /` (one %v page), 30%% control (a %v device read), 20%% dynamic and 10%% media (pages of `sim_cost` 4 and 8). Loads %s of the mix's capacity (%.0f req/s), %v cells. Run twice: with the priority queue (qsc, priority-lc, random) and in arrival order (`order = \"arrival\"`: qsc, lc, random), so QSC's own effect is measured without the priority queue's. Verdict: the worse of the two orders' verdicts.\n\n",
		h.opt.boards, claim004Unit, 2*claim004Unit, loadsText(l004), h.capacity004(), h.claimDuration())
	fmt.Fprintf(&s, claimRule+"\n\n", h.opt.repeats, h.opt.seed, h.opt.seed+1, h.roundsNote(scClaim004))
	fmt.Fprintln(&s, "With the priority queue:")
	fmt.Fprintln(&s)
	h.claimTable(&s, scClaim004, claim004Setups, l004, "slow share")
	fmt.Fprintln(&s, "In arrival order:")
	fmt.Fprintln(&s)
	h.claimTable(&s, scClaim004FIFO, claim004FIFOSetups, h.claimLoadsRun(scClaim004FIFO), "slow share")
	fmt.Fprintf(&s, "Result: %s.%s%s\n\n", why, h.noisyNote(scClaim004, claim004Setups, l004), h.noisyNote(scClaim004FIFO, claim004FIFOSetups, h.claimLoadsRun(scClaim004FIFO)))

	// The headline is the verdicts run's (headline.go), filled in after it
	// from results/bench-paper/verdicts.json, the one source it shares with
	// docs/performance.md; the sections below are the process-based cells'.
	fmt.Fprintln(w, "Every claim's verdict, on the testbed and on real boards (the verdicts run, after this report):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, headBegin)
	fmt.Fprintln(w, headEnd)
	fmt.Fprintln(w)
	fmt.Fprintln(w, "The sections below are this report's process-based cells (`ews run` boards), each paper's experiment with its own rule and verdict.")
	fmt.Fprintln(w)
	fmt.Fprint(w, s.String())
}

// combine is the worse of two verdicts.
func combine(a, b string) string {
	rank := map[string]int{"not run": 0, "not reproduced": 1, "partly": 2, "reproduced": 3}
	if rank[a] <= rank[b] {
		return a
	}
	return b
}

func (h *harness) capacity004() float64 {
	_, c := claim004Boards(h.opt.boards, h.opt.capacity, "priority")
	return c
}

func ratioList(rs []float64) string {
	var s []string
	for _, r := range rs {
		s = append(s, fmt.Sprintf("%.0f%%", r*100))
	}
	return strings.Join(s, " and ")
}

func loadsText(ls []float64) string {
	var s []string
	for _, l := range ls {
		s = append(s, loadName(l))
	}
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}

func intList(ns []int) string {
	var s []string
	for _, n := range ns {
		s = append(s, fmt.Sprint(n))
	}
	return strings.Join(s, " and ")
}

// why001 says what stopping the busy board bought and cost against lc, the
// strongest plain baseline: its share of dispatches, p99, shed and mean.
func (h *harness) why001(loads []float64, word string) string {
	var out []string
	for _, l := range loads {
		a, b := h.repeats(scClaim001, "adaptive", l), h.repeats(scClaim001, "lc", l)
		if len(a) == 0 || len(b) == 0 {
			continue
		}
		f := func(sc, setup string, g func(*row) float64) float64 { return h.figure(sc, setup, l, g).mean }
		share := func(r *row) float64 { return 100 * max(r.LastShare, 0) }
		p99 := func(r *row) float64 { return r.Rep.Total.Latency.P99 }
		shed := func(r *row) float64 { return 100 * float64(r.Rep.Total.Shed) / float64(max(r.Rep.Total.Sent, 1)) }
		out = append(out, fmt.Sprintf("at %s adaptive sent %.1f%% of the dispatches to the busy board (lc %.1f%%), its p99 was %.0f ms (lc %.0f), it shed %.1f%% (lc %.1f%%), mean %.1f ms (lc %.1f)",
			loadName(l), f(scClaim001, "adaptive", share), f(scClaim001, "lc", share), f(scClaim001, "adaptive", p99), f(scClaim001, "lc", p99),
			f(scClaim001, "adaptive", shed), f(scClaim001, "lc", shed), f(scClaim001, "adaptive", meanLatency), f(scClaim001, "lc", meanLatency)))
	}
	if len(out) == 0 {
		return ""
	}
	if word == "reproduced" {
		return " Stopping the busy board: " + strings.Join(out, "; ") + "."
	}
	return " What stopping the busy board did, against lc: " + strings.Join(out, "; ") + "." + h.trade001(loads)
}

// trade001 explains 001's result where the figures show the trade: the
// busy board held (a smaller share), a lower p99, and less completed or a
// longer mean beyond the spread. The policy does what the paper says
// either way.
func (h *harness) trade001(loads []float64) string {
	for _, l := range loads {
		a := func(g func(*row) float64) float64 { return h.figure(scClaim001, "adaptive", l, g).mean }
		b := func(g func(*row) float64) float64 { return h.figure(scClaim001, "lc", l, g).mean }
		share := func(r *row) float64 { return r.LastShare }
		p99 := func(r *row) float64 { return r.Rep.Total.Latency.P99 }
		la, lb := h.figure(scClaim001, "adaptive", l, meanLatency), h.figure(scClaim001, "lc", l, meanLatency)
		ta, tb := h.figure(scClaim001, "adaptive", l, (*row).completed), h.figure(scClaim001, "lc", l, (*row).completed)
		worse := la.mean-lb.mean > max(la.spread(), lb.spread()) || tb.mean-ta.mean > max(ta.spread(), tb.spread())
		if a(share) < b(share) && a(p99) < b(p99) && worse {
			return " A board busy at 90% cpu is 10× slower, not gone: under least connections it gets a request only when one of its two slots frees, so few requests are slow there, and stopping it removes what it still completes. The policy does what the paper describes (only the most loaded board, over the threshold, for the stop time); it trades capacity for tail latency, which the paper's two measures (mean delay, throughput) do not reward."
		}
	}
	return ""
}

// roundsNote says how the repetitions of a claim scenario ran: in rounds
// (each round restarts every setup) or back to back per setup, read from
// the order of the rows (older runs ran back to back).
func (h *harness) roundsNote(sc string) string {
	var reps []int
	for _, r := range h.rows {
		if r.Scenario == sc && r.Repeat > 0 {
			reps = append(reps, r.Repeat)
		}
	}
	if len(reps) < 2 || h.opt.repeats < 2 {
		return ""
	}
	if reps[0] == reps[1] {
		return ", in rounds: each round starts every setup's cluster anew, so a burst of other work on the machine lands in one round of several setups rather than in every round of one"
	}
	return ", back to back per setup (a burst of other work on the machine can hit every repetition of one setup)"
}
