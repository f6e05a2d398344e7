package state

import (
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/clock"
	"github.com/jonboulle/clockwork"
)

// Peers' certificates and seals are judged in cluster time
// (docs/DESIGN.md, Time): a board whose own clock is off either way
// refuses a valid peer while its clock is uncorrected, and takes it once
// corrected to the master's; a certificate that expired in cluster time is
// refused whatever the board's own clock says.
func TestSealsUnderClockOffsets(t *testing.T) {
	ca := clusterCA(t, "main")
	now := time.Now().Truncate(time.Second) // certificates keep whole seconds
	shortLived := ca.issue(t, "ews2", now.Add(-time.Hour), now.Add(time.Minute))
	for _, tc := range []struct {
		name      string
		offset    time.Duration // the receiver's own clock
		corrected bool
		peer      *Identity // ews2's
		later     time.Duration
		ok        bool
	}{
		{"30 days behind, uncorrected", -30 * 24 * time.Hour, false, ca.ids["ews2"], 0, false},
		{"30 days behind, corrected", -30 * 24 * time.Hour, true, ca.ids["ews2"], 0, true},
		{"3 hours behind, uncorrected", -3 * time.Hour, false, ca.ids["ews2"], 0, false},
		{"3 hours behind, corrected", -3 * time.Hour, true, ca.ids["ews2"], 0, true},
		{"10 minutes ahead of an expiry a minute away, uncorrected", 10 * time.Minute, false, shortLived, 0, false},
		{"10 minutes ahead of an expiry a minute away, corrected", 10 * time.Minute, true, shortLived, 0, true},
		{"corrected, and the certificate expired in cluster time", -3 * time.Hour, true, shortLived, 2 * time.Minute, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := clockwork.NewFakeClockAt(now)
			c := clock.New(base, tc.offset)
			if tc.corrected {
				c.SetCorrection(-tc.offset)
			}
			r3 := newKeyring(t, ca.ids["ews3"], "ews3")
			s2 := newKeyring(t, tc.peer, "ews2").learn(t, r3)
			base.Advance(tc.later)
			err := check(r3.g, mustIntro(t, s2.key), c.Now())
			if err == nil {
				err = check(r3.g, s2.seal(t, "ews3", &ReportMsg{Name: "ews2", Runstate: Running}), c.Now())
			}
			if (err == nil) != tc.ok {
				t.Fatalf("ews2's intro and report at ews3's cluster time %v: %v, want taken %v", c.Now(), err, tc.ok)
			}
		})
	}
}
