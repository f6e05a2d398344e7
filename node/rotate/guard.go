package rotate

import (
	"bytes"
	"crypto/ed25519"
	"fmt"

	"github.com/ews-firmware/ews/node/durable"
)

// Guard is the rotation document's check on every board (durable.Guard;
// docs/DESIGN.md, Trust), run by the leader before it proposes and by
// every board on each committed entry and restored snapshot: the entry
// opens under the store's secret and is admitted (admit: the admin's
// signature when verify is set, a generation of 1 to MaxGen), and it
// follows the document it replaces: the same generation with the same
// secrets and a phase no earlier, or the next generation in phase Install
// once the current one is Done. A current document that is itself not
// admitted (one written before this check) may be replaced by any
// admitted one. store and verify are the cluster's, the same on every
// board.
func Guard(store []byte, verify ed25519.PublicKey) durable.Guard {
	return func(cur durable.Document, data []byte) error {
		next, err := Open(store, data)
		if err != nil {
			return err
		}
		if err := admit(verify, next); err != nil {
			return err
		}
		if len(cur.Data) == 0 {
			return nil
		}
		old, err := Open(store, cur.Data)
		if err != nil || admit(verify, old) != nil {
			return nil // the current one is no rotation of the admin's: an admitted one replaces it
		}
		return follows(old, next)
	}
}

// follows is nil when next may replace old in the log.
func follows(old, next Doc) error {
	switch {
	case next.Gen == old.Gen:
		if !bytes.Equal(next.Key, old.Key) || !bytes.Equal(next.Session, old.Session) {
			return fmt.Errorf("rotate: generation %d with other secrets than the log's", next.Gen)
		}
		if next.Phase.rank() < old.Phase.rank() {
			return fmt.Errorf("rotate: generation %d back from phase %s to %s", next.Gen, old.Phase, next.Phase)
		}
		return nil
	case next.Gen == old.Gen+1:
		if old.Phase != Done {
			return fmt.Errorf("rotate: generation %d while %d is still rolling (phase %s)", next.Gen, old.Gen, old.Phase)
		}
		if next.Phase != Install {
			return fmt.Errorf("rotate: generation %d starts in phase %s, not %s", next.Gen, next.Phase, Install)
		}
		return nil
	}
	return fmt.Errorf("rotate: generation %d after %d: want %d or %d", next.Gen, old.Gen, old.Gen, old.Gen+1)
}
