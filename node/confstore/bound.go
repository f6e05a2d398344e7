package confstore

import (
	"encoding/json"
	"fmt"
)

// MaxStored bounds the store's document as the durable log holds it (the
// JSON of every version kept): 3/4 of the log's cap on one document
// (1 MiB, node/durable), so a document never nears it. History is bounded
// in bytes as well as in count: before a write, the oldest versions are
// dropped until the document fits; a version that does not fit alone is
// refused (*TooLargeError, 413) before anything is committed. With the
// count alone, four 250 kB versions (or 30 edits of a 35 KiB config)
// passed the cap and every write after them failed for good.
const MaxStored = 768 << 10

// TooLargeError is a version whose document, with no history at all,
// would be over the budget.
type TooLargeError struct{ Size, Budget int }

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("confstore: the configuration encodes to %d bytes, over the %d the durable log keeps for it (even with no history)", e.Size, e.Budget)
}

// docOverhead is the JSON of a document around its versions.
var docOverhead = len(`{"v":1,"versions":[]}`)

// bound is vs (oldest first, the new version last) cut to the versions the
// document keeps: at most Keep, and the newest ones whose document fits
// in Budget bytes. Its document's encoding is returned with it.
func (s *Store) bound(vs []Version) ([]Version, []byte, error) {
	if len(vs) > s.opts.Keep {
		vs = vs[len(vs)-s.opts.Keep:]
	}
	sizes := make([]int, len(vs))
	total := docOverhead
	for i, v := range vs {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, nil, fmt.Errorf("confstore: encode version %d: %w", v.Number, err)
		}
		sizes[i] = len(b) + 1 // and its comma
		total += sizes[i]
	}
	for len(vs) > 1 && total > s.opts.Budget {
		total -= sizes[0]
		sizes, vs = sizes[1:], vs[1:]
	}
	b, err := json.Marshal(doc{V: docVersion, Versions: vs})
	if err != nil {
		return nil, nil, fmt.Errorf("confstore: encode: %w", err)
	}
	if len(b) > s.opts.Budget {
		return nil, nil, &TooLargeError{Size: len(b), Budget: s.opts.Budget}
	}
	return vs, b, nil
}

// Encode is the document of versions vs as the log holds it (what Kept
// reads).
func Encode(vs []Version) ([]byte, error) {
	b, err := json.Marshal(doc{V: docVersion, Versions: vs})
	if err != nil {
		return nil, fmt.Errorf("confstore: encode: %w", err)
	}
	return b, nil
}
