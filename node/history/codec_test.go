package history

import (
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestBlockRoundTrip: what a block holds comes back as it went in, for
// times that step back and forth and any float64 reading.
func TestBlockRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		var in []blockSeries
		for s := range 1 + r.IntN(4) {
			bs := blockSeries{Name: string(rune('a' + s)), Unit: []string{"", "°C", "%"}[r.IntN(3)]}
			t0 := r.Int64N(1 << 42)
			for range r.IntN(50) {
				t0 += r.Int64N(20000) - 5000
				bs.Raw = append(bs.Raw, rawPt{T: t0, V: r.NormFloat64() * 1e6})
			}
			for range r.IntN(20) {
				t0 += r.Int64N(120000)
				bs.Agg = append(bs.Agg, aggPt{T: t0, N: uint32(r.IntN(100)), Min: r.Float32(), Mean: r.Float32(), Max: r.Float32()})
			}
			in = append(in, bs)
		}
		blk := appendBlock(nil, in)
		var out []blockSeries
		good, dropped, _ := scan(append([]byte(fileHeader), blk...), func(b []blockSeries) { out = b })
		if dropped != 0 || good != int64(len(fileHeader)+len(blk)) {
			t.Fatalf("trial %d: good %d dropped %d", trial, good, dropped)
		}
		for i := range in {
			if len(in[i].Raw) == 0 {
				in[i].Raw = nil
			}
			if len(in[i].Agg) == 0 {
				in[i].Agg = nil
			}
		}
		if !reflect.DeepEqual(in, out) {
			t.Fatalf("trial %d: round trip differs\n in %+v\nout %+v", trial, in, out)
		}
	}
}
