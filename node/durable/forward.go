package durable

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// A write reaches the leader from any board (docs/NOTES.md "Durable state
// on Raft"): the board that took it POSTs the encoded command to the
// leader's ForwardPath, with the same proof as the log's stream, and the
// leader answers once the entry is committed. Whatever board is the
// dispatch master, the log's leader decides.

// ForwardPath is where the leader takes forwarded writes.
const ForwardPath = "/internal/raft/apply"

// forwardAnswer is the leader's answer to a forwarded write.
type forwardAnswer struct {
	Index    uint64         `json:"index"`
	Version  uint64         `json:"version"`
	Error    string         `json:"error,omitempty"`
	Conflict *ConflictError `json:"conflict,omitempty"`
	NoQuorum *NoQuorumError `json:"no_quorum,omitempty"`
	NoLeader bool           `json:"no_leader,omitempty"` // ErrNoLeader
	// NotLeader: the board asked does not lead the log and wrote nothing
	// (errNotLeader); NoLeader is set with it for boards of the previous
	// build, which know only that
	NotLeader bool   `json:"not_leader,omitempty"`
	Refused   string `json:"refused,omitempty"` // a *RefusedError's kind
}

// Forwarder sends writes to the leader over HTTP(S).
type Forwarder struct {
	opts   StreamOptions
	client *http.Client
}

// NewForwarder returns a Forwarder dialing as opts say (Resolve, TLS,
// Sign; Self is unused).
func NewForwarder(opts StreamOptions) *Forwarder {
	tr := &http.Transport{TLSClientConfig: opts.TLS, MaxIdleConnsPerHost: 2, IdleConnTimeout: time.Minute}
	return &Forwarder{opts: opts, client: &http.Client{Transport: tr}}
}

// Send forwards cmd to leader (Options.Forward).
func (f *Forwarder) Send(ctx context.Context, leader string, cmd []byte) (uint64, uint64, error) {
	hostport, ok := f.opts.Resolve(leader)
	if !ok {
		return 0, 0, fmt.Errorf("durable: forward to %s: its HTTP address is not known yet", leader)
	}
	scheme := "http"
	if f.opts.TLS != nil {
		scheme = "https"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, scheme+"://"+hostport+ForwardPath, bytes.NewReader(cmd))
	if err != nil {
		return 0, 0, fmt.Errorf("durable: forward: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "ews-raft")
	if f.opts.Sign != nil {
		f.opts.Sign(req, leader)
	}
	resp, err := f.client.Do(req)
	if err != nil {
		return 0, 0, fmt.Errorf("durable: forward to %s: %w", leader, err)
	}
	defer resp.Body.Close()
	var a forwardAnswer
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&a); err != nil {
		return 0, 0, fmt.Errorf("durable: forward to %s: %s: %w", leader, resp.Status, err)
	}
	switch {
	case a.Conflict != nil:
		return a.Index, 0, a.Conflict
	case a.NoQuorum != nil:
		return 0, 0, a.NoQuorum
	case a.NotLeader:
		return 0, 0, errNotLeader
	case a.NoLeader:
		return 0, 0, ErrNoLeader
	case a.Refused != "":
		return 0, 0, &RefusedError{Kind: a.Refused, Err: errors.New(a.Error)}
	case a.Error != "":
		return 0, 0, fmt.Errorf("durable: forward to %s: %s", leader, a.Error)
	}
	return a.Index, a.Version, nil
}

// ForwardHandler takes writes other boards forward to this one (mount it
// behind the board check, like Stream).
func (r *Raft) ForwardHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		cmd, err := io.ReadAll(io.LimitReader(req.Body, maxData*2))
		if err != nil {
			writeAnswer(w, http.StatusBadRequest, forwardAnswer{Error: err.Error()})
			return
		}
		c, err := decodeCommand(cmd)
		if err != nil {
			writeAnswer(w, http.StatusBadRequest, forwardAnswer{Error: err.Error()})
			return
		}
		if !knownKind(c.Kind) {
			writeAnswer(w, http.StatusForbidden, forwardAnswer{Refused: c.Kind, Error: fmt.Sprintf("durable: no document %q", c.Kind)})
			return
		}
		index, version, err := r.Commit(req.Context(), cmd)
		var ce *ConflictError
		var nq *NoQuorumError
		var re *RefusedError
		switch {
		case errors.As(err, &re):
			writeAnswer(w, http.StatusForbidden, forwardAnswer{Refused: re.Kind, Error: re.Err.Error()})
		case errors.As(err, &ce):
			writeAnswer(w, http.StatusConflict, forwardAnswer{Index: index, Conflict: ce, Error: ce.Error()})
		case errors.As(err, &nq):
			w.Header().Set("Retry-After", "1")
			writeAnswer(w, http.StatusServiceUnavailable, forwardAnswer{NoQuorum: nq, Error: nq.Error()})
		case errors.Is(err, errNotLeader):
			w.Header().Set("Retry-After", "1")
			writeAnswer(w, http.StatusServiceUnavailable, forwardAnswer{NotLeader: true, NoLeader: true, Error: err.Error()})
		case errors.Is(err, ErrNoLeader):
			w.Header().Set("Retry-After", "1")
			writeAnswer(w, http.StatusServiceUnavailable, forwardAnswer{NoLeader: true, Error: err.Error()})
		case err != nil:
			writeAnswer(w, http.StatusInternalServerError, forwardAnswer{Error: err.Error()})
		default:
			writeAnswer(w, http.StatusOK, forwardAnswer{Index: index, Version: version})
		}
	})
}

func writeAnswer(w http.ResponseWriter, code int, a forwardAnswer) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(a)
}
