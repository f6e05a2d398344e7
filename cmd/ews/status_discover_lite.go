//go:build lite

package main

// discoveredCandidates is empty in the lite build, which has no mDNS
// (docs/NOTES.md "The lite build"): `ews status` looks on this machine and
// at --url only.
func discoveredCandidates() []candidate { return nil }
