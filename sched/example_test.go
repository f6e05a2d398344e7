package sched_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/ews-firmware/ews/state/row"

	"github.com/ews-firmware/ews/sched"
)

// The master classifies a request, waits for a board, runs or forwards the
// request there, and gives the slot back.
func Example() {
	d, err := sched.NewDispatcher(sched.DefaultConfig(), sched.Options{})
	if err != nil {
		panic(err)
	}
	defer d.Close()
	// the replicated table as the state package gossips it: Linknum is
	// each board's own report
	d.Update([]row.Board{
		{Name: "ews1", Rank: 0, HTTP: "10.0.0.11:8080", Capacity: 2, Weight: 1, Runstate: row.Running, Linknum: 1},
		{Name: "ews2", Rank: 1, HTTP: "10.0.0.12:8080", Capacity: 2, Weight: 1, Runstate: row.Running, Linknum: 0},
		{Name: "ews3", Rank: 2, HTTP: "10.0.0.13:8080", Capacity: 2, Weight: 1, Runstate: row.Down, Linknum: 0},
	})
	class := d.Classifier().Classify("POST", "/api/devices/relay1/toggle")
	t, err := d.Acquire(context.Background(), &sched.Request{Class: class, Path: "/api/devices/relay1/toggle"})
	var shed *sched.ErrShed
	if errors.As(err, &shed) {
		fmt.Println("503, Retry-After", shed.RetryAfter)
		return
	}
	defer t.Done()
	fmt.Println(d.Classifier().Name(class), "->", t.Board)
	// Output: control -> ews2
}
