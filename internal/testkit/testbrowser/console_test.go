//go:build browser

// The package is the browser tests' alone (`-tags browser`, the browser
// step): untagged, the race step compiled it, chromedp and every cdproto
// domain with -race for nothing else (issue 49 part 4).

package testbrowser

import (
	"slices"
	"testing"

	cdpruntime "github.com/chromedp/cdproto/runtime"
)

func TestBrowserConsole(t *testing.T) {
	events := []any{
		&cdpruntime.EventExceptionThrown{ExceptionDetails: &cdpruntime.ExceptionDetails{Text: "Uncaught", Exception: &cdpruntime.RemoteObject{Description: "TypeError: x is undefined"}}},
		&cdpruntime.EventConsoleAPICalled{Type: cdpruntime.ConsoleAPICalledTypeError, Args: []*cdpruntime.RemoteObject{{Value: []byte(`"boom"`)}}},
		&cdpruntime.EventConsoleAPICalled{Type: cdpruntime.ConsoleAPICalledTypeWarning, Args: []*cdpruntime.RemoteObject{{Description: "careful"}}},
		&cdpruntime.EventConsoleAPICalled{Type: cdpruntime.ConsoleAPICalledTypeLog, Args: []*cdpruntime.RemoteObject{{Description: "hello"}}},
		"not an event",
	}
	for _, tc := range []struct {
		name     string
		warnings bool
		want     []string
	}{
		{"errors", false, []string{"exception: Uncaught TypeError: x is undefined", `console.error: "boom"`}},
		{"errors and warnings", true, []string{"exception: Uncaught TypeError: x is undefined", `console.error: "boom"`, "console.warning: careful"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Console{Warnings: tc.warnings}
			for _, ev := range events {
				c.Listen(ev)
			}
			if got := c.All(); !slices.Equal(got, tc.want) {
				t.Fatalf("recorded %q, want %q", got, tc.want)
			}
		})
	}
}
