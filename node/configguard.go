package node

import (
	"errors"
	"fmt"
	"slices"

	"github.com/ews-firmware/ews/node/confstore"
	"github.com/ews-firmware/ews/node/durable"
	"github.com/pelletier/go-toml/v2"
)

// configGuard is the configuration store's check on every board, before
// the leader proposes a version and where each board applies it
// (durable.Guard; docs/DESIGN.md, Trust): the document decodes and its
// newest version holds the cluster-wide sections only, as valid TOML. The
// full check, with the board's own sections and its hardware, runs where
// the PUT is taken (checkStore); a guard must decide the same on every
// board, so it leaves out what differs between them.
func configGuard(_ durable.Document, data []byte) error {
	v, ok := confstore.Kept(data)
	if !ok {
		return errors.New("config: the document does not decode")
	}
	var doc map[string]any
	if err := toml.Unmarshal([]byte(v.Text), &doc); err != nil {
		return fmt.Errorf("config: version %d: %w", v.Number, err)
	}
	for k := range doc {
		if !slices.Contains(confstore.Sections, k) {
			return fmt.Errorf("config: version %d: %q is not a cluster-wide section (the store holds %v)", v.Number, k, confstore.Sections)
		}
	}
	return nil
}
