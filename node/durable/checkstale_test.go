package durable

import (
	"errors"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// A write built from a version the leader's copy has left is a conflict
// before it is proposed, not a guard's refusal: the revocations' guard
// (a list that only grows) refused a revocation made from a stale list as
// "the list may not drop board ews4" (403), where the writer should have
// read the list again and added to it (TestLinearizable's long form, seed
// 1: 14 of 22 revocations). A write from the current version is still
// judged by the guards, and one from a version ahead of the copy (the
// users store's barrier) still goes to the log.
func TestCheckStaleWriteIsAConflict(t *testing.T) {
	f := NewFSM(testutil.Logger())
	f.Guard(KindConfig, func(cur Document, data []byte) error { // grows only: every old line stays
		for l := range strings.SplitSeq(string(cur.Data), ",") {
			if l != "" && !strings.Contains(","+string(data)+",", ","+l+",") {
				return errors.New("the list may not drop " + l)
			}
		}
		return nil
	})
	for i, d := range []string{"ews2", "ews2,ews4"} {
		if res := f.Apply(entry(t, uint64(i+1), KindConfig, d, uint64(i))).(applyResult); res.err != nil {
			t.Fatalf("%s: %v", d, res.err)
		}
	}
	var ce *ConflictError
	if err := f.Check(entry(t, 0, KindConfig, "ews2,ews3", 1).Data); !errors.As(err, &ce) || ce.Have != 2 || ce.Expect != 1 {
		t.Fatalf("a write from version 1 of 2: %v, want a conflict (have 2, expect 1)", err)
	}
	if err := f.Check(entry(t, 0, KindConfig, "ews3", 2).Data); !IsRefused(err) {
		t.Fatalf("a write from the current version that drops a board: %v, want the guard's refusal", err)
	}
	if err := f.Check(entry(t, 0, KindConfig, "ews2,ews4,ews3", 2).Data); err != nil {
		t.Fatalf("a write from the current version: %v", err)
	}
	if err := f.Check(entry(t, 0, KindConfig, "ews2,ews4", 99).Data); errors.As(err, &ce) {
		t.Fatalf("a write ahead of the copy: %v, want it left to the log", err)
	}
}
