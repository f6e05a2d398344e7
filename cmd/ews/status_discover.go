//go:build !lite

package main

import (
	"context"
	"sort"
	"time"
)

// statusDiscoverTimeout bounds the mDNS step of `ews status` without --url.
const statusDiscoverTimeout = 1500 * time.Millisecond

// discoveredCandidates are the boards that announce themselves on the LAN
// (node/mdns), masters first: the last places `ews status` looks.
func discoveredCandidates() []candidate {
	boards, err := discoverBoards(context.Background(), statusDiscoverTimeout)
	if err != nil {
		return nil
	}
	sort.SliceStable(boards, func(i, j int) bool { return boards[i].Role == "master" && boards[j].Role != "master" })
	var out []candidate
	for _, b := range boards {
		if u := b.URL(); u != "" {
			out = append(out, candidate{url: u, why: "found on the LAN over mDNS: " + b.Name})
		}
	}
	return out
}
