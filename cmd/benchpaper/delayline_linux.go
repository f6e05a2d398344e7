package main

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// delayedPacket is a packet waiting in one of the line's queues.
type delayedPacket struct {
	due time.Time
	b   []byte
}

// delayLine is the helper's whole life (delayLineArg); it returns only on
// an error. One reader takes packets off the TUN device; each delay has
// its own FIFO (a fixed delay keeps arrival order, so the head is always
// the next due) and writer.
func delayLine(args []string) error {
	ready, o, err := delayLineArgs(args)
	if err != nil {
		return err
	}
	tun, err := openTUN(lineDev)
	if err != nil {
		return err
	}
	defer tun.Close()
	for _, c := range [][]string{
		{"ip", "link", "set", lineDev, "up"},
		{"sysctl", "-q", "-w", "net.ipv4.conf." + lineDev + ".rp_filter=0"},
		{"ip", "route", "add", "default", "dev", lineDev, "table", lineTable},
		// what comes back out of the line is routed normally; all else goes in
		{"ip", "rule", "add", "iif", lineDev, "lookup", "main", "pref", "50"},
		{"ip", "rule", "add", "lookup", lineTable, "pref", "60"},
	} {
		if err := runCmd(c[0], c[1:]...); err != nil {
			return err
		}
	}
	queues := [2]chan delayedPacket{make(chan delayedPacket, 1<<16), make(chan delayedPacket, 1<<16)}
	for _, q := range queues {
		go func() {
			t := time.NewTimer(time.Hour)
			for p := range q {
				if d := time.Until(p.due); d > 0 {
					t.Reset(d)
					<-t.C // the emulated wire's delay, not a wait for a condition
				}
				if _, err := tun.Write(p.b); err != nil {
					fmt.Fprintf(os.Stderr, "paper: delay line: write: %v\n", err)
					os.Exit(1) // the wire is broken: the harness sees the helper gone
				}
			}
		}()
	}
	if err := os.WriteFile(ready, []byte("ok"), 0o644); err != nil {
		return err
	}
	buf := make([]byte, 1<<16)
	for {
		n, err := tun.Read(buf)
		if err != nil {
			return err
		}
		d, far := o.delay(buf[:n])
		q := queues[0]
		if far {
			q = queues[1]
		}
		select {
		case q <- delayedPacket{due: time.Now().Add(d), b: append([]byte(nil), buf[:n]...)}:
		default: // the queue is full: the wire drops it, as a full netem queue does
		}
	}
}

// openTUN makes the TUN device name (IPv4 packets without a header) and
// returns it, non-blocking so Go's poller serves its reads and writes.
func openTUN(name string) (*os.File, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	ifr, err := unix.NewIfreq(name)
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	ifr.SetUint16(unix.IFF_TUN | unix.IFF_NO_PI)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "/dev/net/tun"), nil
}
