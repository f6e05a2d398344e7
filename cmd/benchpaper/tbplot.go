package main

import (
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// tbFigure is one claim's plot: a figure per setup against the load (or,
// with one load, a bar per setup).
type tbFigure struct {
	name, title, y string
	xlabel         string // "" = the load
	setups         []string
	x              []float64
	v              map[string][]float64 // per setup, one per x
}

// plot records value for setup at load x in the figure named name.
func (t *tbHarness) plot(name, title, y, setup string, x, value float64) {
	if t.figs == nil {
		t.figs = map[string]*tbFigure{}
	}
	f := t.figs[name]
	if f == nil {
		f = &tbFigure{name: name, title: title, y: y, v: map[string][]float64{}}
		t.figs[name] = f
		t.figOrder = append(t.figOrder, name)
	}
	if !slices.Contains(f.setups, setup) {
		f.setups = append(f.setups, setup)
	}
	if !slices.Contains(f.x, x) {
		f.x = append(f.x, x)
	}
	f.v[setup] = append(f.v[setup], value)
}

// xlabel names the x axis of a figure (default: the load).
func (t *tbHarness) xlabel(name, text string) {
	if f := t.figs[name]; f != nil {
		f.xlabel = text
	}
}

// plotCell records a cell's mean latency per setup at load x.
func (t *tbHarness) plotCell(name, title string, c *tbCell, x float64) {
	for _, s := range c.setups {
		t.plot(name, title, "mean latency ms (5 repeats)", s, x, c.stat(s, fMean).mean)
	}
}

// savePlots draws every recorded figure into dir and returns the files.
func (t *tbHarness) savePlots(dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("paper: %w", err)
	}
	var out []string
	for _, name := range t.figOrder {
		f := t.figs[name]
		p := plot.New()
		p.Title.Text, p.Y.Label.Text = f.title, f.y
		if len(f.x) == 1 {
			w := vg.Points(20)
			for i, s := range f.setups {
				b, err := plotter.NewBarChart(plotter.Values{f.v[s][0]}, w)
				if err != nil {
					return out, fmt.Errorf("paper: plot %s: %w", name, err)
				}
				b.Offset = w * vg.Length(i-len(f.setups)/2)
				b.Color = plotutil.Color(i)
				b.LineStyle.Color = color.Black
				p.Add(b)
				p.Legend.Add(s, b)
			}
			p.X.Label.Text = fmt.Sprintf("load %.2f", f.x[0])
			if f.xlabel != "" {
				p.X.Label.Text = f.xlabel
			}
			p.Legend.Top = true
		} else {
			p.X.Label.Text = "load (share of the capacity measured with lc)"
			if f.xlabel != "" {
				p.X.Label.Text = f.xlabel
			}
			var args []any
			for _, s := range f.setups {
				xy := make(plotter.XYs, 0, len(f.x))
				for i, x := range f.x {
					if i < len(f.v[s]) {
						xy = append(xy, plotter.XY{X: x, Y: f.v[s][i]})
					}
				}
				args = append(args, s, xy)
			}
			if err := plotutil.AddLinePoints(p, args...); err != nil {
				return out, fmt.Errorf("paper: plot %s: %w", name, err)
			}
			p.Legend.Top, p.Legend.Left = true, true
		}
		path := filepath.Join(dir, name+".png")
		if err := p.Save(7*vg.Inch, 4*vg.Inch, path); err != nil {
			return out, fmt.Errorf("paper: plot %s: %w", name, err)
		}
		out = append(out, path)
	}
	return out, nil
}
