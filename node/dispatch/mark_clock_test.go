package dispatch

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/clock"
	"github.com/jonboulle/clockwork"
)

// Marks are signed and judged in cluster time (docs/DESIGN.md, Time): a
// board whose own clock is off either way accepts the master's marks once
// its clock is corrected to the master's, and refuses them while not.
func TestMarkUnderClockOffsets(t *testing.T) {
	key := RandomKey()
	client := netip.MustParseAddr("203.0.113.7")
	b := bind("POST", "/api/devices/r1/toggle", client)
	for _, tc := range []struct {
		name      string
		offset    time.Duration // the verifier's own clock off the master's
		corrected bool          // its correction was measured
		want      string        // "" accepted, else the refusal
	}{
		{"3 hours behind, corrected", -3 * time.Hour, true, ""},
		{"10 minutes ahead, corrected", 10 * time.Minute, true, ""},
		{"30 days behind, corrected", -30 * 24 * time.Hour, true, ""},
		{"2 seconds behind, uncorrected: within the TTL", -2 * time.Second, false, ""},
		{"3 hours behind, uncorrected", -3 * time.Hour, false, RefuseExpired},
		{"10 minutes ahead, uncorrected", 10 * time.Minute, false, RefuseExpired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := clockwork.NewFakeClockAt(time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC))
			master := clock.New(base, 0)
			board := clock.New(base, tc.offset)
			if tc.corrected {
				board.SetCorrection(-tc.offset) // what state measures on the probes
			}
			signer, _ := NewMarker(key, MarkOptions{Now: master.Now})
			verifier, _ := NewMarker(key, MarkOptions{Now: board.Now})
			tok := signer.SignString(KindDispatch, 1, "ews2", b)
			base.Advance(time.Second) // on the way
			_, err := verifier.VerifyToken(tok, KindDispatch, "ews2", b)
			var me *MarkError
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (!errors.As(err, &me) || me.Reason != tc.want):
				t.Fatalf("err %v, want refusal %q", err, tc.want)
			}
			// the reverse way: a via mark the board signs, the master judges
			via := verifier.SignString(KindVia, 1, "ews1", b)
			if _, err := signer.VerifyToken(via, KindVia, "ews1", b); (err == nil) != (tc.want == "") {
				t.Fatalf("the master judging the board's via mark: %v, want refused %v", err, tc.want != "")
			}
		})
	}
}
