package devsync

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"time"

	"github.com/ews-firmware/ews/hal"
)

// stream reads one connection to board p until it fails or ctx ends;
// connected is called once the board answered with an event stream, synced
// once its "devices" list was taken.
func (m *Mirror) stream(ctx context.Context, p Peer, connected, synced func()) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	scheme := "http://"
	if m.opts.TLS != nil {
		scheme = "https://"
	}
	url := scheme + p.HTTP + m.opts.Path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("devsync: request %s: %w", url, err)
	}
	for k, vs := range m.opts.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept", "text/event-stream")
	if m.opts.Sign != nil {
		m.opts.Sign(req, p.Name)
	}
	req.Header.Set("Cache-Control", "no-cache")
	resp, err := m.opts.Client.Do(req)
	if err != nil {
		return fmt.Errorf("devsync: connect: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("devsync: GET %s: status %s", m.opts.Path, resp.Status)
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "text/event-stream" {
		return fmt.Errorf("devsync: GET %s: content type %q, want text/event-stream", m.opts.Path, mt)
	}
	m.setUp(p.Name, true, "")
	connected()

	// a stream that sends nothing for Idle (the hub pings far more often)
	// is dead: cancelling the request ends the blocked read
	errIdle := fmt.Errorf("devsync: nothing received for %s", m.opts.Idle)
	idle := time.AfterFunc(m.opts.Idle, func() { cancel(errIdle) })
	defer idle.Stop()
	rd := newSSEReader(resp.Body, m.opts.MaxEvent, m.opts.MaxEvent, func() { idle.Reset(m.opts.Idle) })
	warned, offered := false, false
	for {
		ev, err := rd.next()
		if err != nil {
			if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
				return cause
			}
			if err == io.EOF {
				return fmt.Errorf("devsync: board closed the stream")
			}
			return fmt.Errorf("devsync: read: %w", err)
		}
		if ev.name == "outputs" {
			offered = true
		} else if ev.name == "devices" && !offered {
			m.offer(p.Name, nil) // a board that keeps no memory: it has nothing to offer
			offered = true
		}
		ignored, err := m.apply(p.Name, ev)
		if err != nil {
			return err
		}
		if ev.name == "devices" && synced != nil {
			synced()
			synced = nil
		}
		if ignored > 0 && !warned {
			m.log.Warn("devsync: ignored state the board may not report (a device of another board)", "board", p.Name, "count", ignored)
			warned = true
		}
	}
}

// apply takes one event from board bn into the mirror; other events go to
// OnEvent, if set. Bad JSON is an error: the stream is not what it should
// be, so the caller reconnects.
func (m *Mirror) apply(bn string, ev event) (ignored int, err error) {
	switch ev.name {
	case "devices":
		var list []hal.Snapshot
		if err := json.Unmarshal(ev.data, &list); err != nil {
			return 0, fmt.Errorf("devsync: bad devices event: %w", err)
		}
		return m.replace(bn, list), nil
	case "outputs":
		var list []hal.Snapshot
		if err := json.Unmarshal(ev.data, &list); err != nil {
			return 0, fmt.Errorf("devsync: bad outputs event: %w", err)
		}
		m.offer(bn, list)
	case "device":
		var s hal.Snapshot
		if err := json.Unmarshal(ev.data, &s); err != nil {
			return 0, fmt.Errorf("devsync: bad device event: %w", err)
		}
		if !m.update(bn, s) {
			return 1, nil
		}
	default:
		if m.opts.OnEvent != nil {
			m.opts.OnEvent(bn, ev.name, ev.data)
		}
	}
	return 0, nil
}
