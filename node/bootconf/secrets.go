package bootconf

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"strings"

	"github.com/ews-firmware/ews/node/dispatch"
	"github.com/ews-firmware/ews/node/rotate"
)

// rotatedSecrets sets the secrets this board runs with (docs/NOTES.md
// "Security", "Rotating the cluster's secrets"): the card's (the gossip
// key, the bundle's session secret and generation), unless a rotation
// left later ones under state_dir (statePath "secrets.json"), which are
// preferred. The users store's secret is the one the card's bundle names
// (store_key, else its key) and never changes at a rotation; the gossip
// key the marks, the board credential and memberlist use is the
// rotation's primary, with the key it rolls from still accepted until the
// rotation is done. A kept file that cannot be read stops the start,
// naming it. Nothing to do alone or without a key.
func (b *Boot) rotatedSecrets() error {
	b.StoreKey = b.ClusterKey
	if len(b.ClusterKey) == 0 || b.State.Standalone() || b.State.Insecure {
		return nil
	}
	card := rotate.Saved{Phase: rotate.Done, Key: b.ClusterKey, Store: b.ClusterKey}
	if bun := b.Security.Bundle; bun != nil {
		card.Session = bun.Session()                                    // OpenTLS's choice too
		if bun.Key == base64.StdEncoding.EncodeToString(b.ClusterKey) { // else a config names another key: that is the store's
			card.Store, card.Gen = bun.Store(), bun.Generation
		}
	}
	if card.Session == nil {
		card.Session = b.ClusterKey // what OpenTLS keys sessions with then
	}
	b.Rotated, b.SecretsPath = card, b.StatePath("secrets.json")
	if b.SecretsPath != "" {
		kept, ok, err := rotate.Load(b.SecretsPath)
		switch {
		case err != nil:
			return err
		case !ok:
		case !bytes.Equal(kept.Store, card.Store):
			b.Security.Notes = append(b.Security.Notes, "rotate: "+b.SecretsPath+" keeps the secrets of another cluster (its store secret is not the card's): starting on the card's")
		case kept.Gen < card.Gen:
			b.Security.Notes = append(b.Security.Notes, "rotate: the card's bundle is of a later rotation than "+b.SecretsPath+": starting on the card's")
		default:
			b.Rotated = kept
		}
	}
	b.StoreKey = b.Rotated.Store
	primary, also := b.Rotated.Keys()
	b.ClusterKey, b.State.Key, b.State.Keys = primary.Key, primary.Key, nil
	for _, s := range also {
		b.State.Keys = append(b.State.Keys, s.Key)
	}
	return nil
}

// MarkKey returns the dispatch mark key for b and, when the key gives no
// protection, a note to log as a warning:
//   - a cluster key (key or key_file): HKDF-SHA256 of it; no note;
//   - standalone (no peers): a random per-process key, since no other board
//     ever verifies this board's marks;
//   - insecure = true with peers: a key derived from the public peers list,
//     so boards of a test cluster accept each other's marks; anyone who
//     reads the config can forge marks.
func MarkKey(b *Boot) (key []byte, note string, err error) {
	if ck := b.ClusterKey; len(ck) > 0 {
		k, err := dispatch.DeriveKey(ck)
		return k, "", err
	}
	if b.State.Standalone() {
		return dispatch.RandomKey(), "", nil
	}
	sum := sha256.Sum256([]byte("ews insecure cluster\x00" + strings.Join(b.PeerList, "\x00")))
	k, err := dispatch.DeriveKey(sum[:])
	return k, "cluster.insecure: dispatch marks are signed with a key derived from the peers list; anyone who knows it can forge them", err
}

// ruleKeySecret keys the rules' Idempotency-Keys: derived from the cluster
// key, so every master makes the same keys and nobody without the key
// guesses one (docs/NOTES.md "Rules cannot be blocked"); a standalone
// board without a key gets a random one (nil); an insecure cluster one
// derived from its peers, as its marks.
func ruleKeySecret(b *Boot) []byte {
	var sum [32]byte
	switch {
	case len(b.StoreKey) > 0: // the first cluster key: the same on every master during a rotation
		sum = sha256.Sum256(append([]byte("ews rule keys\x00"), b.StoreKey...))
	case b.State.Standalone():
		return nil
	default:
		sum = sha256.Sum256([]byte("ews insecure rule keys\x00" + strings.Join(b.PeerList, "\x00")))
	}
	return sum[:]
}
