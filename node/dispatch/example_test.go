package dispatch_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/ews-firmware/ews/internal/promx"
	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/sched"
	"github.com/ews-firmware/ews/state"
)

// alone is a Cluster of one board that is its own master.
type alone struct{}

func (alone) Self() string                   { return "ews1" }
func (alone) IsMaster() bool                 { return true }
func (alone) Master() (string, string, bool) { return "ews1", "127.0.0.1:8080", true }
func (alone) Epoch() uint64                  { return 1 }

// How the node wires the Front: build it once, give it a dispatcher while
// this board is master, feed the dispatcher the table, step down.
func Example() {
	reg := promx.NewRegistry()
	// a standalone board: only it verifies its marks (a cluster derives
	// the key from the cluster key: dispatch.DeriveKey)
	marker, _ := dispatch.NewMarker(dispatch.RandomKey(), dispatch.MarkOptions{})
	local := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ran", r.URL.Path) })
	front, err := dispatch.NewFront(dispatch.Options{
		Cluster: alone{}, Local: local, Marker: marker,
		Mode:         "proxy",                // [sched] mode
		RedirectHold: 100 * time.Millisecond, // a heartbeat
		Registerer:   reg,
	})
	if err != nil {
		panic(err)
	}
	defer front.Close()

	// on becoming master
	d, _ := sched.NewDispatcher(sched.DefaultConfig(), sched.Options{Registerer: reg})
	front.SetDispatcher(d)
	// on every table change or heartbeat
	d.Update([]state.Board{
		{Name: "ews1", HTTP: "127.0.0.1:8080", Capacity: 4, Weight: 1, Runstate: state.Running, Linknum: front.InFlight()},
	})

	rec := httptest.NewRecorder()
	front.ServeHTTP(rec, httptest.NewRequest("POST", "/api/devices/relay1/toggle", nil))
	fmt.Print(rec.Code, " ", rec.Body.String())
	fmt.Println("in flight", front.InFlight(), "completed", front.Completed())

	// on stepping down: queued requests are answered 503 at once
	front.StepDown()
	rec = httptest.NewRecorder()
	front.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	fmt.Println(rec.Code, rec.Header().Get("Retry-After"))
	// Output:
	// 200 ran /api/devices/relay1/toggle
	// in flight 0 completed 1
	// 503 1
}
