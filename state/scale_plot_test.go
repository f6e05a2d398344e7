//go:build scaleplot

package state

import (
	"fmt"
	"os"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plotScale draws TestScale's figures against the number of boards: times
// on the left panel, the master's traffic, the table's size and the
// largest packet on the right.
func plotScale(rs []scaleResult, path string) error {
	series := func(f func(scaleResult) float64) plotter.XYs {
		xys := make(plotter.XYs, len(rs))
		for i, r := range rs {
			xys[i] = plotter.XY{X: float64(r.boards), Y: f(r)}
		}
		return xys
	}
	ms := func(d float64) float64 { return d / 1e6 }
	times := plot.New()
	times.Title.Text = "simulated: times vs boards (heartbeat 100ms, tmax 1s, 1 % loss)"
	times.X.Label.Text = "boards"
	times.Y.Label.Text = "ms"
	times.Add(plotter.NewGrid())
	times.Legend.Top, times.Legend.Left = true, true
	times.Y.Min, times.Y.Max = 0, 1400 // room for the legend above the takeover line
	if err := plotutil.AddLinePoints(times,
		"change reaches every board, p50", series(func(r scaleResult) float64 { return ms(float64(r.reachP50)) }),
		"change reaches every board, p99", series(func(r scaleResult) float64 { return ms(float64(r.reachP99)) }),
		"takeover, max of 3", series(func(r scaleResult) float64 { return ms(float64(slices.Max(r.takeover))) }),
	); err != nil {
		return fmt.Errorf("state: plot: %w", err)
	}
	traffic := plot.New()
	traffic.Title.Text = "simulated: the master's traffic and table vs boards"
	traffic.X.Label.Text = "boards"
	traffic.Y.Label.Text = "KB/s sent (before encryption); table bytes / 100"
	traffic.Y.Scale = plot.LogScale{}
	traffic.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	traffic.Add(plotter.NewGrid())
	traffic.Legend.Top, traffic.Legend.Left = true, true
	if err := plotutil.AddLinePoints(traffic,
		"master at idle, KB/s", series(func(r scaleResult) float64 { return r.idleBps / 1000 }),
		fmt.Sprintf("master at %d dispatches/s, KB/s", dispatchRate), series(func(r scaleResult) float64 { return r.loadBps / 1000 }),
		"full table, bytes / 100 (TCP only when relayed, from 64 here)", series(func(r scaleResult) float64 { return float64(r.tableBytes) / 100 }),
		"largest UDP packet, bytes / 100", series(func(r scaleResult) float64 { return float64(r.maxUDP) / 100 }),
	); err != nil {
		return fmt.Errorf("state: plot: %w", err)
	}
	packet, err := plotter.NewLine(plotter.XYs{{X: float64(rs[0].boards), Y: MaxPacket / 100.0}, {X: float64(rs[len(rs)-1].boards), Y: MaxPacket / 100.0}})
	if err != nil {
		return fmt.Errorf("state: plot: %w", err)
	}
	packet.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
	traffic.Add(packet)
	traffic.Legend.Add("one packet (1,400 B) / 100", packet)

	img := vgimg.New(14*vg.Inch, 5*vg.Inch)
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Points(20)}
	times.Draw(tiles.At(dc, 0, 0))
	traffic.Draw(tiles.At(dc, 1, 0))
	return savePNG(img, path)
}
func savePNG(img *vgimg.Canvas, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("state: plot: %w", err)
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("state: plot: %w", err)
	}
	return f.Close()
}
