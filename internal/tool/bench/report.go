package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the outcome of a run; its JSON form is documented in the package doc.
type Report struct {
	URL           string        `json:"url"`
	Mix           string        `json:"mix"`
	Seed          uint64        `json:"seed"`
	RateAsked     float64       `json:"rate_asked"`
	RateOffered   float64       `json:"rate_offered"`
	RateAchieved  float64       `json:"rate_achieved"`
	DurationAsked float64       `json:"duration_asked_s"`
	Elapsed       float64       `json:"elapsed_s"`
	Max           int64         `json:"max"`
	Concurrency   int           `json:"concurrency"`
	Interrupted   bool          `json:"interrupted"`
	Sustained     bool          `json:"sustained"`
	Note          string        `json:"note"`
	LagP99        float64       `json:"lag_p99_ms"`
	LagMax        float64       `json:"lag_max_ms"`
	Classes       []ClassReport `json:"classes"`
	Total         ClassReport   `json:"total"`
	// Control is every control class together (a path under /api/ or
	// /cgi-bin/, the floor's rule), when the mix has more than one: the
	// p99 of control spread over several devices. Nil otherwise.
	Control *ClassReport `json:"control,omitempty"`
	// Simulated clients (Config.Clients, redirect mode's assignments):
	// how many, requests sent straight to an assigned board, 307s
	// followed, clients a board sent back, assigned boards found gone.
	Clients   int   `json:"clients,omitempty"`
	Direct    int64 `json:"direct,omitempty"`
	Redirects int64 `json:"redirects,omitempty"`
	Back      int64 `json:"back,omitempty"`
	Left      int64 `json:"left,omitempty"`
	// Closed-loop clients and their mean think time (Config.Closed); 0: open loop.
	Closed int     `json:"closed,omitempty"`
	ThinkS float64 `json:"think_s,omitempty"`
}

// ClassReport holds the figures of one class (or of all, in Report.Total).
type ClassReport struct {
	Name         string   `json:"name"`
	Method       string   `json:"method,omitempty"`
	Path         string   `json:"path,omitempty"`
	Weight       float64  `json:"weight"`
	Due          int64    `json:"due"`
	Sent         int64    `json:"sent"`
	OK           int64    `json:"ok"`
	Shed         int64    `json:"shed"`
	Errors       int64    `json:"errors"`
	Denied       int64    `json:"denied"` // of Errors, 401 and 403 answers
	Overflow     int64    `json:"overflow"`
	Unsent       int64    `json:"unsent"`
	OKPerSec     float64  `json:"ok_per_s"`
	Latency      Latency  `json:"latency_ms"`
	ShedLatency  Latency  `json:"shed_latency_ms"`
	ErrorSamples []string `json:"error_samples"`
	// Trace is the time between hand-offs of its answered requests
	// (Config.Trace); nil when not asked or no answer carried marks.
	Trace *TraceReport `json:"trace,omitempty"`
}

// Latency summarises one histogram, in milliseconds.
type Latency struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
}

// lostShare is the share of due arrivals that may go unsent before the rate counts as not
// sustained (the sender may be a few ms late at the very end of the window).
const lostShare = 0.01

// lagWarnMS is the sender lag p99 above which the text report warns that the client was late.
const lagWarnMS = 10.0

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func summarise(h *Histogram) Latency {
	return Latency{
		P50: ms(h.Quantile(0.50)), P90: ms(h.Quantile(0.90)), P99: ms(h.Quantile(0.99)),
		Max: ms(h.Max()), Mean: ms(h.Mean()),
	}
}

// report builds the Report once every request goroutine has ended.
func (r *runner) report(elapsed time.Duration, interrupted bool) *Report {
	cfg := r.cfg
	secs := elapsed.Seconds()
	per := func(n int64) float64 {
		if secs <= 0 {
			return 0
		}
		return float64(n) / secs
	}
	mix := make([]string, len(cfg.Classes))
	rep := &Report{
		URL: cfg.URL, Seed: cfg.Seed, RateAsked: cfg.Rate, DurationAsked: cfg.Duration.Seconds(),
		Elapsed: secs, Max: cfg.Max, Concurrency: cfg.Concurrency, Interrupted: interrupted,
		LagP99: ms(r.lag.Quantile(0.99)), LagMax: ms(r.lag.Max()),
		Clients: len(r.cl), Direct: r.clients.direct.Load(), Redirects: r.clients.redirects.Load(),
		Back: r.clients.back.Load(), Left: r.clients.left.Load(),
		Closed: cfg.Closed, ThinkS: cfg.Think.Seconds(),
	}
	all, allShed := NewHistogram(), NewHistogram()
	tot := ClassReport{Name: "total", Weight: 1, ErrorSamples: []string{}}
	ctl, ctlLat, ctlShed, nctl := ClassReport{Name: "control", ErrorSamples: []string{}}, NewHistogram(), NewHistogram(), 0
	var ctlTrace traceStats
	for i, c := range cfg.Classes {
		mix[i] = c.String()
		st := r.stats[i]
		cr := ClassReport{
			Name: c.Name, Method: c.Method, Path: c.Path, Weight: c.Weight,
			Due: st.due.Load(), Sent: st.sent.Load(), OK: st.ok.Load(), Shed: st.shed.Load(),
			Errors: st.errs.Load(), Denied: st.denied.Load(), Overflow: st.overflow.Load(), Unsent: st.unsent.Load(),
			Latency: summarise(st.lat), ShedLatency: summarise(st.shedLat),
			ErrorSamples: st.errorSamples(),
		}
		cr.OKPerSec = per(cr.OK)
		if cfg.Trace {
			cr.Trace = st.trace.report()
		}
		rep.Classes = append(rep.Classes, cr)
		if (FloorModel{}).control(c) {
			nctl++
			ctl.Weight += cr.Weight
			addCounts(&ctl, &cr)
			ctlLat.Merge(st.lat)
			ctlShed.Merge(st.shedLat)
			ctlTrace.merge(&st.trace)
		}
		addCounts(&tot, &cr)
		for _, s := range cr.ErrorSamples {
			if len(tot.ErrorSamples) < maxSamples {
				tot.ErrorSamples = append(tot.ErrorSamples, c.Name+": "+s)
			}
		}
		all.Merge(st.lat)
		allShed.Merge(st.shedLat)
	}
	tot.OKPerSec = per(tot.OK)
	tot.Latency, tot.ShedLatency = summarise(all), summarise(allShed)
	rep.Total = tot
	if nctl > 1 {
		ctl.OKPerSec = per(ctl.OK)
		ctl.Latency, ctl.ShedLatency = summarise(ctlLat), summarise(ctlShed)
		if cfg.Trace {
			ctl.Trace = ctlTrace.report()
		}
		rep.Control = &ctl
	}
	rep.Mix = strings.Join(mix, ",")
	rep.RateOffered = per(tot.Due)
	rep.RateAchieved = per(tot.Sent)
	rep.Sustained, rep.Note = sustained(rep)
	return rep
}

// addCounts adds c's counters to into.
func addCounts(into, c *ClassReport) {
	into.Due += c.Due
	into.Sent += c.Sent
	into.OK += c.OK
	into.Shed += c.Shed
	into.Errors += c.Errors
	into.Denied += c.Denied
	into.Overflow += c.Overflow
	into.Unsent += c.Unsent
}

// sustained says whether the sender kept the asked rate, and if not, why, in one sentence.
func sustained(rep *Report) (bool, string) {
	t := rep.Total
	lost := t.Overflow + t.Unsent
	if t.Overflow == 0 && float64(t.Unsent) <= lostShare*float64(t.Due) {
		return true, ""
	}
	var why []string
	if t.Overflow > 0 {
		why = append(why, fmt.Sprintf("%d arrivals found %d requests in flight (--concurrency) and were not sent", t.Overflow, rep.Concurrency))
	}
	if t.Unsent > 0 {
		why = append(why, fmt.Sprintf("%d arrivals were due before the end but the sender was too late (max lag %.1f ms)", t.Unsent, rep.LagMax))
	}
	return false, fmt.Sprintf("RATE NOT SUSTAINED: asked %.0f/s, sent %.0f/s; %d of %d arrivals lost: %s",
		rep.RateAsked, rep.RateAchieved, lost, t.Due, strings.Join(why, "; "))
}

// WriteText prints the human report: a header, a table with one row per class and a total.
func (rep *Report) WriteText(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "ews bench %s  seed %d\nmix %s\n", rep.URL, rep.Seed, rep.Mix)
	if rep.Closed > 0 {
		fmt.Fprintf(&b, "closed loop: %d clients, think %.3fs mean\n", rep.Closed, rep.ThinkS)
	}
	fmt.Fprintf(&b, "rate asked %.0f/s  offered %.0f/s  achieved %.0f/s  over %.2fs (asked %.2fs", rep.RateAsked, rep.RateOffered, rep.RateAchieved, rep.Elapsed, rep.DurationAsked)
	if rep.Max > 0 {
		fmt.Fprintf(&b, ", max %d requests", rep.Max)
	}
	fmt.Fprintf(&b, ")  in-flight cap %d  sender lag p99 %.2fms max %.2fms\n", rep.Concurrency, rep.LagP99, rep.LagMax)
	if rep.Clients > 0 {
		fmt.Fprintf(&b, "%d clients: %d requests straight to an assigned board, %d redirects followed, %d sent back, %d boards gone\n",
			rep.Clients, rep.Direct, rep.Redirects, rep.Back, rep.Left)
	}
	if rep.Interrupted {
		b.WriteString("INTERRUPTED: partial report\n")
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "class\tsent\tok\tshed\terrors\tlost\tok/s\tp50 ms\tp90 ms\tp99 ms\tmax ms\tshed p99 ms\t")
	row := func(c ClassReport) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%.1f\t%s\t%s\t%s\t%s\t%s\t\n", c.Name, c.Sent, c.OK, c.Shed, c.Errors, c.Overflow+c.Unsent, c.OKPerSec,
			fmtMS(c.Latency.P50, c.OK), fmtMS(c.Latency.P90, c.OK), fmtMS(c.Latency.P99, c.OK), fmtMS(c.Latency.Max, c.OK), fmtMS(c.ShedLatency.P99, c.Shed))
	}
	for _, c := range rep.Classes {
		row(c)
	}
	row(rep.Total)
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("(latency from the intended send time; ok = 2xx/3xx of which p50..max, shed = 503, lost = not sent: in-flight cap or sender late)\n")
	for _, s := range rep.Total.ErrorSamples {
		fmt.Fprintf(&b, "error: %s\n", s)
	}
	if rep.Note != "" {
		fmt.Fprintf(&b, "\n%s\n", rep.Note)
	}
	if rep.LagP99 > lagWarnMS {
		fmt.Fprintf(&b, "WARNING: sender lag p99 %.1f ms: this client could not send on time (busy machine?); latencies include that delay\n", rep.LagP99)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func fmtMS(v float64, n int64) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

// WriteJSONFile writes the report as indented JSON to path (0644), replacing it.
func (rep *Report) WriteJSONFile(path string) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return fmt.Errorf("bench: encode report: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("bench: write --json: %w", err)
	}
	return nil
}

// deniedHint says, when requests were refused with 401 or 403, which flag to pass ("" when
// none were); most reports whether they were most of those sent, which fails the run.
func (rep *Report) deniedHint() (hint string, most bool) {
	t := rep.Total
	if t.Denied == 0 {
		return "", false
	}
	return fmt.Sprintf("%d of %d requests were refused with 401/403: pass the board's credentials, e.g. --header 'Authorization: Bearer TOKEN' (make demo's token is demo-token)", t.Denied, t.Sent), 2*t.Denied > t.Sent
}
