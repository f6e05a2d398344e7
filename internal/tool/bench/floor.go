package bench

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/devpath"
)

// The floor (docs/NOTES.md, Benchmarks and measurements): the latency a
// perfect scheduler would give the same arrivals. It replays the arrival
// stream of a run (its seed, rate, mix and duration, so the very requests
// the run sent) through ideal queues: no request ever waits for a board
// slot; each device runs one operation at a time in arrival order; a read
// that arrives while a read of its device is queued or running shares it
// (as the boards' shared reads do), and with MaxAge one that arrives
// within MaxAge of the last read's end is answered at once. A page takes
// PageLatency, a device operation DeviceLatency; other requests (a
// device's state, CGI) take nothing. Nothing is shed.

// FloorModel is what the ideal queues assume of the boards.
type FloorModel struct {
	DeviceLatency time.Duration // one device operation
	PageLatency   time.Duration // one page (a browse request)
	MaxAge        time.Duration // reads answered from a reading this young; 0: none
	// Control names the classes that are not pages (default: every class
	// whose path is under /api/ or /cgi-bin/).
	Control map[string]bool
}

// ClassFloor is one class's floor.
type ClassFloor struct {
	Name     string
	Requests int
	Latency  Latency
	took     []time.Duration // each request's floor, for Together
}

// Together is the floor of the classes of fl that m counts as control,
// as one class named "control" (Report.Control's floor: control spread
// over several devices); ok false when fewer than two are control.
func Together(classes []Class, fl []ClassFloor, m FloorModel) (ClassFloor, bool) {
	var all []time.Duration
	n := 0
	for i, c := range classes {
		if i < len(fl) && m.control(c) {
			all = append(all, fl[i].took...)
			n++
		}
	}
	if n < 2 {
		return ClassFloor{}, false
	}
	return ClassFloor{Name: "control", Requests: len(all), Latency: Summarize(all), took: all}, true
}

// Floor replays the arrivals of seed at rate over classes for d through
// the ideal queues of m and returns each class's latency there.
func Floor(classes []Class, seed uint64, rate float64, d time.Duration, m FloorModel) ([]ClassFloor, error) {
	if rate <= 0 || d <= 0 || len(classes) == 0 {
		return nil, fmt.Errorf("bench: floor: want a rate, a duration and a mix")
	}
	type op struct {
		end  time.Duration
		read bool
	}
	last := map[string]op{} // device -> its last operation in arrival order
	lat := make([][]time.Duration, len(classes))
	arr := NewArrivals(seed, rate, classes)
	for a := arr.Next(); a.At < d; a = arr.Next() {
		c := classes[a.Class]
		dev, read := deviceOf(c.Method, c.Path)
		var took time.Duration
		switch {
		case dev != "":
			prev := last[dev]
			switch {
			case read && prev.read && prev.end > a.At: // joins the read queued or running
				took = prev.end - a.At
			case read && prev.read && m.MaxAge > 0 && a.At-prev.end <= m.MaxAge: // a young reading
			default:
				end := max(a.At, prev.end) + m.DeviceLatency
				last[dev] = op{end: end, read: read}
				took = end - a.At
			}
		case !m.control(c):
			took = m.PageLatency
		}
		lat[a.Class] = append(lat[a.Class], took)
	}
	out := make([]ClassFloor, len(classes))
	for i, c := range classes {
		out[i] = ClassFloor{Name: c.Name, Requests: len(lat[i]), Latency: Summarize(lat[i]), took: lat[i]}
	}
	return out, nil
}

// FloorOfReport is Floor for the run rep describes (its mix, seed, asked
// rate and duration), with the control classes' Together floor last
// when the mix has more than one.
func FloorOfReport(rep *Report, m FloorModel) ([]ClassFloor, error) {
	classes, err := ParseMix(rep.Mix)
	if err != nil {
		return nil, err
	}
	fl, err := Floor(classes, rep.Seed, rep.RateAsked, time.Duration(rep.DurationAsked*float64(time.Second)), m)
	if err != nil {
		return nil, err
	}
	if c, ok := Together(classes, fl, m); ok {
		fl = append(fl, c)
	}
	return fl, nil
}

func (m FloorModel) control(c Class) bool {
	if m.Control != nil {
		return m.Control[c.Name]
	}
	p, _, _ := strings.Cut(c.Path, "?")
	return strings.HasPrefix(p, "/api/") || strings.HasPrefix(p, "/cgi-bin/")
}

// deviceOf is the device a request operates and whether it is a read, from
// the HTTP contract (devpath.Of, the rule sched.DeviceOf follows).
func deviceOf(method, path string) (string, bool) {
	path, _, _ = strings.Cut(path, "?")
	return devpath.Of(method, path)
}

// Summarize is the latency summary of samples, exact (sorted, nearest rank).
func Summarize(s []time.Duration) Latency {
	if len(s) == 0 {
		return Latency{}
	}
	s = slices.Clone(s)
	slices.Sort(s)
	at := func(q float64) float64 {
		i := int(q*float64(len(s))+0.999999) - 1
		return ms(s[min(max(i, 0), len(s)-1)])
	}
	var sum time.Duration
	for _, v := range s {
		sum += v
	}
	return Latency{P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: ms(s[len(s)-1]), Mean: ms(sum / time.Duration(len(s)))}
}
