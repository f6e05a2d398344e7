package node

import (
	"crypto/sha256"
	"errors"
	"net/http"
	"strings"

	"github.com/ews-firmware/ews/node/actuate"
	"github.com/ews-firmware/ews/node/audit"
	"github.com/ews-firmware/ews/node/automation"
)

// ruleKeySecret keys the rules' Idempotency-Keys: derived from the cluster
// key, so every master makes the same keys and nobody without the key
// guesses one (docs/NOTES.md "Rules cannot be blocked"); a standalone
// board without a key gets a random one (nil); an insecure cluster one
// derived from its peers, as its marks.
func ruleKeySecret(b *boot) []byte {
	var sum [32]byte
	switch {
	case len(b.storeKey) > 0: // the first cluster key: the same on every master during a rotation
		sum = sha256.Sum256(append([]byte("ews rule keys\x00"), b.storeKey...))
	case b.state.Standalone():
		return nil
	default:
		sum = sha256.Sum256([]byte("ews insecure rule keys\x00" + strings.Join(b.peerList, "\x00")))
	}
	return sum[:]
}

// reportTurnBack writes a rule's refused or retried turn-back to the audit
// log: action rule.turn_back, the answer's status (200 once it ran after
// a retry).
func (n *Node) reportTurnBack(c actuate.Command, tries int, err error) {
	status := http.StatusOK
	var ae *actuate.Error
	switch {
	case errors.As(err, &ae):
		status = ae.Status
	case err != nil:
		status = http.StatusServiceUnavailable
	}
	n.acc.acct.audit.Record(audit.Entry{User: "rule:" + strings.TrimPrefix(c.Origin, "rule-"), Role: "admin",
		Action: "rule.turn_back", Target: c.Device + " " + c.Kind.String(), Result: status})
}

// automation is the automation's config of b: [mqtt] and [[rule]] with
// the rules' key secret, the board's clock and the config's citations.
func (b *boot) automation() automation.Config {
	c := b.auto
	c.KeySecret, c.Clock, c.Cite = ruleKeySecret(b), b.clock, b.cite
	return c
}
