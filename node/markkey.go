package node

import (
	"crypto/sha256"
	"strings"

	"github.com/ews-firmware/ews/node/dispatch"
)

// markKey returns the dispatch mark key for b and, when the key gives no
// protection, a note to log as a warning:
//   - a cluster key (key or key_file): HKDF-SHA256 of it; no note;
//   - standalone (no peers): a random per-process key, since no other board
//     ever verifies this board's marks;
//   - insecure = true with peers: a key derived from the public peers list,
//     so boards of a test cluster accept each other's marks; anyone who
//     reads the config can forge marks.
func markKey(b *boot) (key []byte, note string, err error) {
	if ck := b.clusterKey; len(ck) > 0 {
		k, err := dispatch.DeriveKey(ck)
		return k, "", err
	}
	if b.state.Standalone() {
		return dispatch.RandomKey(), "", nil
	}
	sum := sha256.Sum256([]byte("ews insecure cluster\x00" + strings.Join(b.peerList, "\x00")))
	k, err := dispatch.DeriveKey(sum[:])
	return k, "cluster.insecure: dispatch marks are signed with a key derived from the peers list; anyone who knows it can forge them", err
}
