//go:build browser

package testbrowser

import (
	"sync"

	cdpruntime "github.com/chromedp/cdproto/runtime"
)

// Console collects a page's uncaught exceptions and console errors (and
// console warnings when Warnings is set). Pass Listen to
// chromedp.WithListener; it is safe to call from chromedp's goroutines.
type Console struct {
	Warnings bool

	mu   sync.Mutex
	msgs []string
}

// Listen records the events that are exceptions or console errors.
func (c *Console) Listen(ev any) {
	var msg string
	switch e := ev.(type) {
	case *cdpruntime.EventExceptionThrown:
		msg = "exception: " + e.ExceptionDetails.Text
		if e.ExceptionDetails.Exception != nil && e.ExceptionDetails.Exception.Description != "" {
			msg += " " + e.ExceptionDetails.Exception.Description
		}
	case *cdpruntime.EventConsoleAPICalled:
		if e.Type != cdpruntime.ConsoleAPICalledTypeError && !(c.Warnings && e.Type == cdpruntime.ConsoleAPICalledTypeWarning) {
			return
		}
		msg = "console." + string(e.Type) + ":"
		for _, a := range e.Args {
			msg += " " + string(a.Value) + a.Description
		}
	default:
		return
	}
	c.mu.Lock()
	c.msgs = append(c.msgs, msg)
	c.mu.Unlock()
}

// All returns what was recorded so far, oldest first.
func (c *Console) All() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.msgs...)
}
