// Package testbed is a virtual-time cluster of simulated embedded web servers (processor sharing, busy windows, per-user caches), ews's queue or an LVS-style director in front, and closed- or open-loop clients: where cmd/benchpaper tests the papers' claims (docs/bench-paper.md).
package testbed
