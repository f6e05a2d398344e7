package durable

import (
	"context"
	"encoding/json"
	"fmt"
)

// command is one entry of the log: write Data as the next version of Kind
// if Kind is at version Expect (optimistic concurrency: the writer read
// version Expect and built Data from it). Every kind of document goes
// through this one command, so a new kind needs no new entry type.
type command struct {
	V      uint8  `json:"v"` // commandVersion
	Kind   string `json:"kind"`
	Data   []byte `json:"data"`
	Expect uint64 `json:"expect"`
	// By and Sig: the person who signed the write (signed.go); an entry
	// of an earlier build has neither, which its kind's Authorizer judges.
	By  string `json:"by,omitempty"`
	Sig []byte `json:"sig,omitempty"`
}

// commandVersion is the encoding of command; a board refuses (and logs)
// an entry of a version it does not know rather than guess.
const commandVersion = 1

// maxData bounds a document (a sealed users store of about 1,000 users is
// 512 KiB).
const maxData = 1 << 20

func encodeCommand(ctx context.Context, kind string, data []byte, expect uint64) ([]byte, error) {
	if kind == "" {
		return nil, fmt.Errorf("durable: a document needs a kind")
	}
	if len(data) > maxData {
		return nil, fmt.Errorf("durable: %s: %d bytes, over %d", kind, len(data), maxData)
	}
	c := command{V: commandVersion, Kind: kind, Data: data, Expect: expect}
	sign(ctx, &c)
	return json.Marshal(c)
}

func decodeCommand(b []byte) (command, error) {
	var c command
	if err := json.Unmarshal(b, &c); err != nil {
		return c, fmt.Errorf("durable: decode entry: %w", err)
	}
	if c.V != commandVersion {
		return c, fmt.Errorf("durable: entry of version %d; this build knows %d", c.V, commandVersion)
	}
	return c, nil
}
