package dispatch

import (
	"errors"
	"net/netip"
	"testing"
	"time"
)

// A rotation (Marker.SetKeys): while it rolls a board signs with one key
// and accepts marks under both; once done, a mark under the old key is
// forged as far as the board can tell. Verifying allocates nothing under
// two keys either.
func TestMarkerSetKeys(t *testing.T) {
	old, next := RandomKey(), RandomKey()
	now := time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)
	opts := MarkOptions{Now: func() time.Time { return now }}
	signer, _ := NewMarker(old, opts)
	newSigner, _ := NewMarker(next, opts)
	board, _ := NewMarker(old, opts)
	b := bind("POST", "/api/devices/r1/toggle", netip.Addr{})
	verify := func(tok string) error { _, err := board.VerifyToken(tok, KindDispatch, "ews2", b); return err }

	if err := board.SetKeys(next, old); err != nil { // the roll: signs with the new, accepts both
		t.Fatal(err)
	}
	underOld, underNew := signer.SignString(KindDispatch, 1, "ews2", b), newSigner.SignString(KindDispatch, 1, "ews2", b)
	if err := verify(underOld); err != nil {
		t.Errorf("during the roll, a mark under the old key: %v", err)
	}
	if err := verify(underNew); err != nil {
		t.Errorf("during the roll, a mark under the new key: %v", err)
	}
	if err := verify(board.SignString(KindDispatch, 1, "ews2", b)); err != nil {
		t.Errorf("during the roll, the board's own mark: %v", err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = verify(underOld) }); n != 0 && !raceEnabled {
		t.Errorf("verifying under the second key allocates %v times", n)
	}

	if err := board.SetKeys(next); err != nil { // done
		t.Fatal(err)
	}
	var r *MarkError
	if err := verify(underOld); !errors.As(err, &r) || r.Reason != RefuseSignature {
		t.Errorf("after the roll, a mark under the old key: %v, want refused (%s)", err, RefuseSignature)
	}
	if err := verify(underNew); err != nil {
		t.Errorf("after the roll, a mark under the new key: %v", err)
	}
	if err := board.SetKeys([]byte("short")); err == nil {
		t.Error("a short key was taken")
	}
}
