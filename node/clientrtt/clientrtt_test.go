package clientrtt

import (
	"context"
	"io"
	"net"
	"net/netip"
	"reflect"
	"testing"
	"time"

	"github.com/ews-firmware/ews/state/nearnet"
)

func TestQuantize(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	for _, c := range []struct{ in, want time.Duration }{
		{ms(0.2), ms(1)},   // a LAN's: never 0
		{ms(5.4), ms(5)},   // 1 ms steps up to 16 ms
		{ms(15.6), ms(16)}, //
		{ms(81), ms(80)},   // 8 ms steps from 128 down to 64: 81 -> 80
		{ms(84.5), ms(88)}, //
		{ms(1000), ms(1024)},
	} {
		got := Quantize([]nearnet.Net{{RTT: c.in}})[0].RTT
		if got != c.want {
			t.Errorf("Quantize(%v) = %v, want %v", c.in, got, c.want)
		}
		if d := float64(got-c.in) / float64(c.in); c.in > ms(16) && (d > 0.0625 || d < -0.0625) {
			t.Errorf("Quantize(%v) = %v: %.1f %% off", c.in, got, d*100)
		}
	}
}

// exchange dials ln once, sends a line and reads the answer: the server
// side accepts one connection, its handshake measured.
func exchange(t *testing.T, ln net.Listener) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			done <- err
			return
		}
		buf := make([]byte, 5)
		if _, err := io.ReadFull(c, buf); err == nil {
			_, err = c.Write(buf)
		}
		done <- c.Close()
	}()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("hello")); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, make([]byte, 5)); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestLoopbackTCPInfo reads TCP_INFO from connections accepted on a real
// loopback socket: the client's /24 is measured with a round trip the
// kernel gave (positive, under a second on loopback), and a connection
// from an address skip names (a board's) is not.
func TestLoopbackTCPInfo(t *testing.T) {
	if !Supported {
		t.Skip("no TCP_INFO on this system")
	}
	raw, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var m nearnet.Meter
	exchange(t, Listen(raw, &m, nil))
	got := m.Best(nearnet.MaxNets, time.Now())
	if len(got) != 1 || got[0].Prefix != netip.MustParsePrefix("127.0.0.0/24") {
		t.Fatalf("measured %v, want 127.0.0.0/24", got)
	}
	if got[0].RTT <= 0 || got[0].RTT > time.Second {
		t.Errorf("loopback round trip %v, want in (0, 1s]", got[0].RTT)
	}

	var skipped nearnet.Meter
	exchange(t, Listen(raw, &skipped, func(a netip.Addr) bool { return a == netip.MustParseAddr("127.0.0.1") }))
	if got := skipped.Best(nearnet.MaxNets, time.Now()); len(got) != 0 {
		t.Errorf("a board's connection was measured: %v", got)
	}
}

// TestRTTNotTCP: a connection that is not a TCP socket has no round trip.
func TestRTTNotTCP(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if d, ok := RTT(a); ok {
		t.Errorf("RTT(pipe) = %v, ok", d)
	}
}

// TestPublish: the loop hands the meter's nearest networks, quantized, to
// set, and returns when its context ends.
func TestPublish(t *testing.T) {
	var m nearnet.Meter
	m.Observe(netip.MustParseAddr("10.0.1.9"), 5300*time.Microsecond, time.Now())
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan []nearnet.Net, 1)
	errc := make(chan error, 1)
	go func() {
		errc <- Publish(ctx, &m, time.Millisecond, func(n []nearnet.Net) {
			select {
			case got <- n:
			default:
			}
		})
	}()
	n := <-got
	cancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	want := []nearnet.Net{{Prefix: netip.MustParsePrefix("10.0.1.0/24"), RTT: 5 * time.Millisecond}}
	if !reflect.DeepEqual(n, want) {
		t.Errorf("published %v, want %v", n, want)
	}
}
