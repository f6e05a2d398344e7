package bench_test

import (
	"fmt"

	"github.com/ews-firmware/ews/internal/tool/bench"
)

func ExampleParseMix() {
	classes, err := bench.ParseMix("control=1:POST /api/devices/s1/read,browse=3:GET /")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range classes {
		fmt.Println(c)
	}
	_, err = bench.ParseMix("control=0.25 POST /x")
	fmt.Println(err)
	// Output:
	// control=0.25:POST /api/devices/s1/read
	// browse=0.75:GET /
	// bench: --mix entry 1 "control=0.25 POST /x": missing ':' after the weight: want NAME=WEIGHT:METHOD PATH
}

func ExampleArrivals() {
	classes, _ := bench.ParseMix("control=0.25:POST /a,browse=0.75:GET /")
	a, b := bench.NewArrivals(7, 100, classes), bench.NewArrivals(7, 100, classes)
	same := true
	for range 1000 {
		same = same && a.Next() == b.Next()
	}
	fmt.Println("same seed, same stream:", same)
	// Output: same seed, same stream: true
}
