package confstore

import (
	"errors"
	"fmt"
	"slices"

	"github.com/pelletier/go-toml/v2"

	"github.com/ews-firmware/ews/node/durable"
)

// Guard is the configuration store's check on every board, before the
// leader proposes a version and where each board applies it
// (durable.Guard; docs/DESIGN.md, Trust): the document decodes and its
// newest version holds the cluster-wide sections only, as valid TOML. The
// full check, with the board's own sections and its hardware, runs where
// the PUT is taken (Options.Check); a guard must decide the same on every
// board, so it leaves out what differs between them.
func Guard(_ durable.Document, data []byte) error {
	v, ok := Kept(data)
	if !ok {
		return errors.New("config: the document does not decode")
	}
	var doc map[string]any
	if err := toml.Unmarshal([]byte(v.Text), &doc); err != nil {
		return fmt.Errorf("config: version %d: %w", v.Number, err)
	}
	for k := range doc {
		if !slices.Contains(Sections, k) {
			return fmt.Errorf("config: version %d: %q is not a cluster-wide section (the store holds %v)", v.Number, k, Sections)
		}
	}
	return nil
}

// Signers is the users store as Authorizer asks it (users.Store).
type Signers interface {
	// Signed reports whether some admin has a key (from then on writes
	// must be signed).
	Signed() bool
	// SignedBy checks that an admin of the current store signed w.
	SignedBy(w durable.Write) error
	// SignedByAt checks that an admin of the store version users signed w.
	SignedByAt(users durable.Document, w durable.Write) error
}

// Authorizer is the configuration store's check of who wrote a version
// (durable.Authorizer; docs/DESIGN.md, Trust): once the users store is
// signed, an admin of it signed the write, and the version's "who" is that
// admin. A snapshot's version is checked against the snapshot's users
// store (checked before it). The first version is the boards' own boot
// sections (Seed), which no person wrote.
func Authorizer(st Signers) durable.Authorizer {
	return func(cur durable.Document, w durable.Write) error {
		if u, ok := w.Docs[durable.KindUsers]; w.Snapshot && ok && u.Version > 0 {
			if err := st.SignedByAt(u, w); err != nil {
				return err
			}
		} else {
			if cur.Version == 0 || !st.Signed() {
				return nil
			}
			if err := st.SignedBy(w); err != nil {
				return err
			}
		}
		// the history's "who" is the signer, not what the writer says
		if v, ok := Kept(w.Data); !ok || v.Who != w.By {
			return fmt.Errorf("config: version by %q signed by %q", v.Who, w.By)
		}
		return nil
	}
}
