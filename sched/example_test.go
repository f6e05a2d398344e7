package sched_test

import (
	"context"
	"errors"
	"fmt"

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
	// the replicated table, adapted: Linknum is each board's own report
	d.Update([]sched.Board{
		{Name: "ews1", Rank: 0, Capacity: 2, Weight: 1, Running: true, Linknum: 1},
		{Name: "ews2", Rank: 1, Capacity: 2, Weight: 1, Running: true, Linknum: 0},
		{Name: "ews3", Rank: 2, Capacity: 2, Weight: 1, Running: false, Linknum: 0},
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
