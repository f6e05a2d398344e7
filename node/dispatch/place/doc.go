// Package place is the placement channel between a follower and its master: the frames, both ends and the leases (docs/DESIGN.md, Placement channel).
package place
