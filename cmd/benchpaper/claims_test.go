package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/tool/bench"
)

func st(vs ...float64) stat { return statOf(vs) }

func TestStatOf(t *testing.T) {
	s := st(10, 14, 12)
	if s.mean != 12 || s.lo != 10 || s.hi != 14 || s.spread() != 4 || s.n != 3 {
		t.Errorf("statOf(10, 14, 12) = %+v", s)
	}
	if z := statOf(nil); z.n != 0 || z.mean != 0 {
		t.Errorf("statOf(nil) = %+v", z)
	}
}

// compare: lower latency and higher completed/s are better; a gap counts
// only beyond the larger spread of the two setups.
func TestCompare(t *testing.T) {
	tests := []struct {
		name                   string
		latA, latB, thrA, thrB stat
		want                   outcome
	}{
		{"faster beyond the spread, same throughput", st(40, 42), st(50, 51), st(200, 201), st(200, 201), win},
		{"more throughput beyond the spread", st(50, 50), st(50, 50), st(230, 232), st(200, 204), win},
		{"faster but the gap is inside the spread", st(40, 50), st(47, 48), st(200), st(200), tie},
		{"faster but less throughput: no win", st(40, 41), st(50, 51), st(180, 181), st(200, 201), tie},
		{"slower beyond the spread", st(60, 61), st(50, 50), st(200), st(200), loss},
		{"equal", st(50), st(50), st(200), st(200), tie},
	}
	for _, tc := range tests {
		if got := compare(tc.latA, tc.latB, tc.thrA, tc.thrB); got != tc.want {
			t.Errorf("%s: compare = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// fakeRow is a claim cell with a mean latency and a completed rate.
func fakeRow(sc, setup string, load float64, rep int, meanMS, completed float64) *row {
	return &row{Scenario: sc, Setup: setup, Load: load, Repeat: rep, Wall: 1,
		Rep: &bench.Report{Total: bench.ClassReport{OK: int64(completed), Sent: int64(completed), Latency: bench.Latency{Mean: meanMS}}}}
}

func TestClaimVerdict(t *testing.T) {
	h := &harness{opt: &options{}}
	add := func(setup string, load float64, ms1, ms2, c1, c2 float64) {
		h.rows = append(h.rows, fakeRow("s", setup, load, 1, ms1, c1), fakeRow("s", setup, load, 2, ms2, c2))
	}
	add("adaptive", 1, 40, 42, 250, 252) // beats rr and lc at 1x
	add("rr", 1, 60, 61, 240, 241)
	add("lc", 1, 55, 57, 250, 251)
	word, why := h.claimVerdict("s", "adaptive", []string{"rr", "lc"}, []float64{1})
	if word != "reproduced" || !strings.Contains(why, "2 of 2") {
		t.Errorf("all wins: %q, %q", word, why)
	}
	add("adaptive", 1.5, 80, 90, 200, 210) // a spread of 10 hides the gaps at 1.5x
	add("rr", 1.5, 85, 86, 205, 206)
	add("lc", 1.5, 70, 71, 230, 231) // better on both beyond the spread
	word, why = h.claimVerdict("s", "adaptive", []string{"rr", "lc"}, []float64{1, 1.5})
	if word != "partly" || !strings.Contains(why, "2 of 4") || !strings.Contains(why, "loses to lc") || !strings.Contains(why, "within the spread of rr") {
		t.Errorf("some wins: %q, %q", word, why)
	}
	word, _ = h.claimVerdict("s", "adaptive", []string{"rr", "lc"}, []float64{1.5})
	if word != "not reproduced" {
		t.Errorf("no win: %q", word)
	}
	if word, _ := h.claimVerdict("s", "qsc", []string{"rr"}, []float64{1}); word != "not run" {
		t.Errorf("no cells: %q", word)
	}
	if combine("partly", "reproduced") != "partly" || combine("reproduced", "not reproduced") != "not reproduced" {
		t.Error("combine is not the worse verdict")
	}
}

func TestAssignVerdict(t *testing.T) {
	cell := func(setup string, completed, cpuPer1k float64) *row {
		r := fakeRow(scAssign, setup, 1, 0, 5, completed)
		r.FrontCPUPer1k = cpuPer1k
		r.Rep.Direct = int64(0.95 * completed)
		return r
	}
	h := &harness{opt: &options{assignBoards: []int{3, 8}, assignRates: []float64{1000}}}
	h.rows = []*row{cell("proxy-3", 500, 0.2), cell("redirect-3", 990, 0.05), cell("proxy-8", 500, 0.2), cell("redirect-8", 1000, 0.04)}
	if word, why := h.assignVerdict(); word != "reproduced" || !strings.Contains(why, "990 vs 500") {
		t.Errorf("both hold: %q, %q", word, why)
	}
	h.rows[3] = cell("redirect-8", 520, 0.04) // 8 boards: no throughput gain
	if word, _ := h.assignVerdict(); word != "partly" {
		t.Errorf("cpu only at 8: %q", word)
	}
	h.rows[1], h.rows[3] = cell("redirect-3", 510, 0.19), cell("redirect-8", 510, 0.19)
	if word, _ := h.assignVerdict(); word != "not reproduced" {
		t.Errorf("neither: %q", word)
	}
	if d := h.directShare(); d < 0.94 || d > 0.96 {
		t.Errorf("direct share %v, want 0.95", d)
	}
}

// The claim scenarios' configs parse with the real parser and carry the
// queue order and the four classes.
func TestClaimConfigsParse(t *testing.T) {
	key := config.NewKey()
	specs, capacity := claim004Boards(3, 2, "arrival")
	// fast 2, normal 1, slow 0.5 boards of 2 slots at 2.6 page units of 10 ms
	if want := 2 * 3.5 / (claim004Cost * 0.01); capacity < want-0.01 || capacity > want+0.01 {
		t.Errorf("capacity %v, want %v", capacity, want)
	}
	bs := make([]board, len(specs))
	for i := range bs {
		bs[i] = board{spec: specs[i], http: "127.0.0.1:" + string(rune('1'+i)) + "000", gossip: "127.0.0.1:" + string(rune('1'+i)) + "001"}
	}
	for _, pol := range claim004FIFOSetups {
		data := boardConfig(bs, 0, true, pol, key, "", 4)
		cfg, err := config.Parse("gen.toml", []byte(data))
		if err != nil {
			t.Fatalf("%s: %v\n%s", pol, err, data)
		}
		if cfg.Sched.Order != "arrival" || len(cfg.Sched.Classes) != 4 || cfg.Sched.Classes[1].Name != "media" || cfg.Sched.Classes[1].Weight != 8 {
			t.Errorf("%s: order %q classes %+v", pol, cfg.Sched.Order, cfg.Sched.Classes)
		}
	}
	as := assignSpecs(3, 20*time.Millisecond, "redirect")
	ab := make([]board, len(as))
	for i := range ab {
		ab[i] = board{spec: as[i], http: "127.0.0.1:" + string(rune('1'+i)) + "000", gossip: "127.0.0.1:" + string(rune('1'+i)) + "001"}
	}
	cfg, err := config.Parse("gen.toml", []byte(boardConfig(ab, 1, true, "priority-lc", key, "", 4)))
	if err != nil || cfg.Sched.Mode != "redirect" || cfg.Node.Capacity != assignSlots {
		t.Errorf("assign config: %v %+v", err, cfg)
	}
	bb := busyBoards(3, 2, 20*time.Millisecond)
	bb[0].schedKeys = "order = \"arrival\"\n"
	b3 := []board{{spec: bb[0], http: "127.0.0.1:1000", gossip: "127.0.0.1:1001"}}
	if cfg, err := config.Parse("gen.toml", []byte(boardConfig(b3, 0, false, "adaptive", key, "", 4))); err != nil || cfg.Sched.Order != "arrival" || cfg.Sched.Adaptive.Suspend.Duration != adaptiveSuspend {
		t.Errorf("adaptive in arrival order: %v", err)
	}
}

func TestClaimFlags(t *testing.T) {
	o, err := parseFlags([]string{"--quick"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.repeats != 2 || len(o.claimLoads) != 1 || len(o.assignBoards) != 2 || o.assignBoards[1] != 8 {
		t.Errorf("--quick: repeats %d claim loads %v boards %v", o.repeats, o.claimLoads, o.assignBoards)
	}
	for _, bad := range [][]string{{"--repeats", "0"}, {"--assign-boards", "3,1"}, {"--assign-rates", "x"}, {"--assign-cpu", "0"}, {"--claim004-loads", "-1"}} {
		if _, err := parseFlags(bad, &bytes.Buffer{}); err == nil {
			t.Errorf("parseFlags(%q) accepted", bad)
		}
	}
	h := &harness{opt: &options{duration: 2 * time.Second}}
	if d := h.claimDuration(); d != 3*time.Second {
		t.Errorf("claim cell of 2 s: %v, want the busy period 3 s", d)
	}
	h.opt.duration = 5 * time.Second
	if d := h.claimDuration(); d != 6*time.Second {
		t.Errorf("claim cell of 5 s: %v, want 6 s", d)
	}
}

// A cell whose repetitions disagree by more than half their mean is named;
// the order of the rows tells rounds from back-to-back repetitions.
func TestNoisyAndRounds(t *testing.T) {
	h := &harness{opt: &options{repeats: 2}}
	h.rows = []*row{ // rounds: rep 1 of both setups, then rep 2
		fakeRow("s", "a", 1, 1, 50, 200), fakeRow("s", "b", 1, 1, 50, 200),
		fakeRow("s", "a", 1, 2, 52, 198), fakeRow("s", "b", 1, 2, 300, 40),
	}
	if h.noisy("s", "a", 1) || !h.noisy("s", "b", 1) {
		t.Errorf("noisy a %v b %v, want only b", h.noisy("s", "a", 1), h.noisy("s", "b", 1))
	}
	if n := h.noisyNote("s", []string{"a", "b"}, []float64{1}); !strings.Contains(n, "b at 1.0x") || strings.Contains(n, "a at") {
		t.Errorf("note %q", n)
	}
	if n := h.roundsNote("s"); !strings.Contains(n, "in rounds") {
		t.Errorf("rounds: %q", n)
	}
	h.rows[1], h.rows[2] = h.rows[2], h.rows[1] // a, a, b, b: back to back
	if n := h.roundsNote("s"); !strings.Contains(n, "back to back") {
		t.Errorf("back to back: %q", n)
	}
}
