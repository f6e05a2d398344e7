package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// plots draws the figures into opt.img and returns their paths.
func (h *harness) plots() ([]string, error) {
	if err := os.MkdirAll(h.opt.img, 0o755); err != nil {
		return nil, fmt.Errorf("paper: %w", err)
	}
	var out []string
	save := func(p *plot.Plot, name string) error {
		path := filepath.Join(h.opt.img, name)
		if err := p.Save(8*vg.Inch, 5*vg.Inch, path); err != nil {
			return fmt.Errorf("paper: plot %s: %w", name, err)
		}
		out = append(out, path)
		return nil
	}
	for _, ratio := range h.opt.ratios {
		// the headline setups alone first, then every policy
		for _, f := range []struct {
			name string
			only []string
		}{{"bench-paper-control-p99-%02.0f-main.png", keySetups}, {"bench-paper-control-p99-%02.0f.png", nil}} {
			p, err := h.p99Plot(scPaper, ratio, f.only)
			if err != nil {
				return out, err
			}
			if p != nil {
				if err := save(p, fmt.Sprintf(f.name, ratio*100)); err != nil {
					return out, err
				}
			}
		}
	}
	if p, err := h.p99Plot(scHetero, h.opt.ratios[0], nil); err != nil {
		return out, err
	} else if p != nil {
		if err := save(p, "bench-paper-hetero-control-p99.png"); err != nil {
			return out, err
		}
	}
	if p, err := h.scalePlot(); err != nil {
		return out, err
	} else if p != nil {
		if err := save(p, "bench-paper-figure5.png"); err != nil {
			return out, err
		}
	}
	return out, nil
}

// keySetups are the setups of the headline plot: the paper's policy, the same without priority,
// one board, and HAProxy with and without priority.
var keySetups = []string{"priority-lc", "lc", setupSingle, setupHAProxy, setupHAPrio}

// p99Plot is control p99 against offered load, one line per setup (log scale: HAProxy without
// priority reaches its 2 s queue timeout while the others stay near 20 ms).
func (h *harness) p99Plot(sc string, ratio float64, only []string) (*plot.Plot, error) {
	var lines []any
	for _, setup := range h.setups(sc) {
		if only != nil && !slices.Contains(only, setup) {
			continue
		}
		var xys plotter.XYs
		for _, r := range h.rows {
			if r.Scenario == sc && r.Setup == setup && r.Ratio == ratio {
				c := classOf(r.Rep, "control")
				if c.OK > 0 {
					xys = append(xys, plotter.XY{X: r.Load, Y: max(c.Latency.P99, 1)})
				}
			}
		}
		if len(xys) > 0 {
			lines = append(lines, setup, xys)
		}
	}
	if len(lines) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s: control p99 vs offered load (%.0f%% control)", sc, ratio*100)
	p.X.Label.Text = "offered load (× cluster capacity)"
	p.Y.Label.Text = "control p99 (ms, log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return nil, fmt.Errorf("paper: %w", err)
	}
	return p, nil
}

// scalePlot is the paper's Figure 5: requests/s completed by the cluster and by one board
// against the offered rate, with the ideal min(offered, capacity) of each.
func (h *harness) scalePlot() (*plot.Plot, error) {
	ratio := h.opt.ratios[0]
	series := func(setup string) plotter.XYs {
		var xys plotter.XYs
		for _, r := range h.rows {
			if r.Scenario == scPaper && r.Setup == setup && r.Ratio == ratio {
				xys = append(xys, plotter.XY{X: r.Rate, Y: r.completed()})
			}
		}
		return xys
	}
	cl, one := series("priority-lc"), series(setupSingle)
	if len(cl) == 0 && len(one) == 0 {
		return nil, nil
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("completed requests/s: %d-board cluster vs one board (%.0f%% control)", h.opt.boards, ratio*100)
	p.X.Label.Text = "offered requests/s"
	p.Y.Label.Text = "completed requests/s (2xx)"
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(40)
	p.Add(plotter.NewGrid())
	capCl := capacityOf(paperBoards(h.opt))
	capOne := capCl / float64(h.opt.boards)
	// ideal is min(offered, c): a knee at the capacity, flat up to the highest offered rate.
	ideal := func(c float64, xs plotter.XYs) plotter.XYs {
		top := 0.0
		for _, xy := range xs {
			top = max(top, xy.X)
		}
		if top <= c {
			return plotter.XYs{{X: 0, Y: 0}, {X: top, Y: top}}
		}
		return plotter.XYs{{X: 0, Y: 0}, {X: c, Y: c}, {X: top, Y: c}}
	}
	var lines []any
	if len(cl) > 0 {
		lines = append(lines, fmt.Sprintf("%d boards, priority-lc", h.opt.boards), cl)
	}
	if len(one) > 0 {
		lines = append(lines, "one board", one)
	}
	if err := plotutil.AddLinePoints(p, lines...); err != nil {
		return nil, fmt.Errorf("paper: %w", err)
	}
	for i, c := range []struct {
		name string
		cap  float64
		xs   plotter.XYs
	}{{"ideal, cluster", capCl, cl}, {"ideal, one board", capOne, one}} {
		if len(c.xs) == 0 {
			continue
		}
		l, err := plotter.NewLine(ideal(c.cap, c.xs))
		if err != nil {
			return nil, fmt.Errorf("paper: %w", err)
		}
		l.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
		l.Color = plotutil.Color(i)
		p.Add(l)
		p.Legend.Add(c.name, l)
	}
	return p, nil
}
