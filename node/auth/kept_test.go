package auth

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// Logouts kept in a file come back into a new Auth; a file that is not
// JSON is logged and taken as none; Save writes only a changed list; a
// Kept without a path (or nil) keeps nothing.
func TestKept(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	newAuth := func() *Auth {
		a, err := New(Config{Mode: "token", Token: "tok"}, Options{SessionTTL: time.Hour, Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	quiet := slog.New(slog.DiscardHandler)
	path := filepath.Join(t.TempDir(), "state", "revoked.json")

	a := newAuth()
	k := Keep(path, a, quiet)
	a.Revoke(Revocation{ID: "s1", Expires: now.Add(time.Minute)})
	k.Save(a.Revoked())
	kept, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the logout was not kept: %v", err)
	}
	os.Remove(path)
	k.Save(a.Revoked()) // the same list: not written again
	if _, err := os.Stat(path); err == nil {
		t.Error("an unchanged list was written again")
	}
	testutil.WriteFile(t, path, kept, 0o600)

	b := newAuth()
	Keep(path, b, quiet)
	if got := b.Revoked(); len(got) != 1 || got[0].ID != "s1" {
		t.Fatalf("after a restart: %v, want s1", got)
	}

	testutil.WriteFile(t, path, []byte("{not json"), 0o600)
	c := newAuth()
	Keep(path, c, quiet)
	if got := c.Revoked(); len(got) != 0 {
		t.Errorf("a corrupt file gave %v", got)
	}

	var none *Kept
	none.Save(a.Revoked())                       // nil: nothing, no panic
	Keep("", newAuth(), quiet).Save(a.Revoked()) // memory only: nothing written
}

// A board's logouts from its stream: one, every one, or a bad event
// refused with nothing taken.
func TestRevokeEvent(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	a, err := New(Config{Mode: "token", Token: "tok"}, Options{SessionTTL: time.Hour, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	exp := now.Add(time.Minute).Format(time.RFC3339)
	if err := a.RevokeEvent("revoke", []byte(`{"id":"s1","expires":"`+exp+`"}`)); err != nil {
		t.Fatal(err)
	}
	if err := a.RevokeEvent("revoked", []byte(`[{"id":"s2","expires":"`+exp+`"},{"id":"s3","expires":"`+exp+`"}]`)); err != nil {
		t.Fatal(err)
	}
	if err := a.RevokeEvent("revoked", []byte(`{not json`)); err == nil {
		t.Error("a bad event taken")
	}
	if got := len(a.Revoked()); got != 3 {
		t.Errorf("%d revocations, want 3", got)
	}
}
