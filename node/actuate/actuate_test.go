package actuate

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/ews-firmware/ews/hal"
)

func TestDoorSendsTheRequest(t *testing.T) {
	var got *http.Request
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		switch r.URL.Path {
		case "/api/devices/relay1/toggle", "/api/devices/led/set", "/api/devices/b/pulse":
			w.Write([]byte(`{"name":"x"}`))
		default:
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"error":"queue full"}`))
		}
	})
	d := NewDoor(h, "tok")
	for _, tc := range []struct {
		c         Command
		wantURL   string
		wantError int
	}{
		{Command{Device: "relay1", Kind: hal.Toggle, Key: "k1", Origin: "mqtt"}, "/api/devices/relay1/toggle", 0},
		{Command{Device: "led", Kind: hal.Set, Value: 42.5}, "/api/devices/led/set?value=42.5", 0},
		{Command{Device: "b", Kind: hal.Pulse, Pulse: 200 * time.Millisecond}, "/api/devices/b/pulse?ms=200", 0},
		{Command{Device: "busy", Kind: hal.TurnOn}, "/api/devices/busy/turn_on", 503},
	} {
		err := d.Act(context.Background(), tc.c)
		if got.Method != http.MethodPost || got.URL.String() != tc.wantURL {
			t.Errorf("%+v: request %s %s, want POST %s", tc.c, got.Method, got.URL, tc.wantURL)
		}
		if got.Header.Get("Authorization") != "Bearer tok" || got.Header.Get("Idempotency-Key") != tc.c.Key {
			t.Errorf("%+v: headers %v", tc.c, got.Header)
		}
		var e *Error
		switch {
		case tc.wantError == 0 && err != nil:
			t.Errorf("%+v: %v", tc.c, err)
		case tc.wantError != 0 && (!errors.As(err, &e) || e.Status != tc.wantError || e.Msg != "queue full" || e.RetryAfter != "1"):
			t.Errorf("%+v: err = %#v, want %d queue full", tc.c, err, tc.wantError)
		}
	}
}
