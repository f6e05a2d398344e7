package chaos

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
)

// Record is one attempt of one client request, as the client logged it.
type Record struct {
	ID         int       `json:"id"`      // the request; its retries share it
	Attempt    int       `json:"attempt"` // 0 for the first send
	Key        string    `json:"key,omitempty"`
	Mistake    bool      `json:"mistake,omitempty"` // the client sent a bad request on purpose
	Board      string    `json:"board"`             // the board the client sent it to
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	Status     int       `json:"status"` // 0: no answer
	RetryAfter string    `json:"retry_after,omitempty"`
	Err        string    `json:"err,omitempty"` // why there was no answer
}

// WriteRecords writes records as JSON lines.
func WriteRecords(w io.Writer, recs []Record) error {
	enc := json.NewEncoder(w)
	for _, r := range recs {
		if err := enc.Encode(r); err != nil {
			return fmt.Errorf("chaos: writing records: %w", err)
		}
	}
	return nil
}

// ReadRecords reads JSON lines written by WriteRecords.
func ReadRecords(r io.Reader) ([]Record, error) {
	var out []Record
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var rec Record
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return nil, fmt.Errorf("chaos: client log line %d: %w", n, err)
		}
		out = append(out, rec)
	}
	return out, sc.Err()
}

// Ran is one device action a board's log says it ran.
type Ran struct {
	Board, Device, Action, Key string // Key: the Idempotency-Key's digest, "" without one
}

// ParseRan reads a board's JSON log (slog's JSON handler) and returns the
// lines whose msg is msg (devapi.ActionRanMsg). Lines that are not JSON
// (a Go runtime crash message, say) are skipped.
func ParseRan(r io.Reader, board, msg string) ([]Ran, error) {
	var out []Ran
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !strings.Contains(string(line), msg) {
			continue
		}
		var rec struct {
			Msg    string `json:"msg"`
			Device string `json:"device"`
			Action string `json:"action"`
			Key    string `json:"key"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Msg != msg {
			continue
		}
		out = append(out, Ran{Board: board, Device: rec.Device, Action: rec.Action, Key: rec.Key})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("chaos: log of %s: %w", board, err)
	}
	return out, nil
}
