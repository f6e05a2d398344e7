package history

import (
	"testing"
)

// FuzzScan: whatever the file holds, reading it never panics, and every
// series it yields has points in a block that passed its CRC.
//
//	go test -run - -fuzz FuzzScan -fuzztime 30s ./node/history/
func FuzzScan(f *testing.F) {
	good := appendBlock([]byte(fileHeader), []blockSeries{{Name: "t", Unit: "°C",
		Raw: []rawPt{{T: 1000, V: 1}, {T: 6000, V: 2}}, Agg: []aggPt{{T: 0, N: 2, Min: 1, Mean: 1.5, Max: 2}}}})
	f.Add(good)
	f.Add(good[:len(good)-3])
	f.Add([]byte(fileHeader))
	f.Add(append(append([]byte{}, good...), marker[:]...))
	f.Fuzz(func(t *testing.T, data []byte) {
		good, dropped, _ := scan(data, func([]blockSeries) {})
		if good < 0 || good > int64(len(data)) || dropped < 0 || dropped > int64(len(data)) {
			t.Fatalf("good %d dropped %d of %d bytes", good, dropped, len(data))
		}
	})
}

// FuzzDecodeBlock: a payload that passed its CRC but is malformed (a
// writer bug) gives an error, never a panic.
func FuzzDecodeBlock(f *testing.F) {
	blk := appendBlock(nil, []blockSeries{{Name: "t", Raw: []rawPt{{T: 5, V: 1}}, Agg: []aggPt{{T: 0, N: 1}}}})
	f.Add(blk[frameLen:])
	f.Fuzz(func(t *testing.T, payload []byte) {
		_, _ = decodeBlock(payload)
	})
}
