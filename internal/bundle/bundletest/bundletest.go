// Package bundletest makes the bundles other packages' tests need: a one-board cluster's admin and board bundles, as objects, text or a file.
package bundletest

import (
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/clustertls"
)

// Admin is a fresh admin bundle whose CA is scoped to boards.
func Admin(t testing.TB, boards ...string) *bundle.Bundle {
	t.Helper()
	admin, err := bundle.NewAdmin(clustertls.Scope{Boards: boards}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return admin
}

// Ews1 is a fresh admin bundle whose CA is scoped to the one board ews1, and ews1's board bundle made from it.
func Ews1(t testing.TB) (admin, board *bundle.Bundle) {
	t.Helper()
	admin = Admin(t, "ews1")
	board, err := admin.Board("ews1", nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return admin, board
}

// Write writes b to path as a board reads it (bundle.Write) and returns path.
func Write(t testing.TB, path string, b *bundle.Bundle) string {
	t.Helper()
	if err := bundle.Write(path, b, false); err != nil {
		t.Fatal(err)
	}
	return path
}

// Text is b's file text.
func Text(t testing.TB, b *bundle.Bundle) string {
	t.Helper()
	text, err := b.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return string(text)
}
