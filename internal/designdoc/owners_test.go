package designdoc

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// goPackage reports whether dir (relative to the module's root) holds a
// Go package: a .go file that is not a test.
func goPackage(dir string) bool {
	entries, err := os.ReadDir(filepath.Join(root, dir))
	if err != nil {
		return false
	}
	for _, e := range entries {
		if n := e.Name(); !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go") {
			return true
		}
	}
	return false
}

// dirExists reports whether dir is a directory of the tree (third_party,
// which holds modules of its own).
func dirExists(dir string) bool {
	st, err := os.Stat(filepath.Join(root, dir))
	return err == nil && st.IsDir()
}

// testPackage reports whether dir holds tests only (e2e).
func testPackage(dir string) bool {
	m, _ := filepath.Glob(filepath.Join(root, dir, "*_test.go"))
	return len(m) > 0
}

// TestOwnersTableMatchesTheTree holds docs/DESIGN.md's "Who owns what"
// table to the tree (issue 46): every package it names exists, and every
// package under node/ (the features) has a row.
func TestOwnersTableMatchesTheTree(t *testing.T) {
	design, err := os.ReadFile(filepath.Join(root, "docs", "DESIGN.md"))
	if err != nil {
		t.Fatal(err)
	}
	owners := Owners(design)
	if len(owners) < 20 {
		t.Fatalf("docs/DESIGN.md: %d packages in the table under \"## Who owns what\"; is the heading there?", len(owners))
	}
	for _, p := range owners {
		if !goPackage(p) && !testPackage(p) && !dirExists(p) {
			t.Errorf("docs/DESIGN.md names package %s, which is not in the tree", p)
		}
	}
	err = filepath.WalkDir(filepath.Join(root, "node"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if goPackage(rel) && !slices.Contains(owners, rel) {
			t.Errorf("package %s has no row in docs/DESIGN.md's \"Who owns what\"", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Owners reads each row's backquoted packages, only under its heading.
func TestOwners(t *testing.T) {
	doc := []byte("## Packages\n| `not/this` | x |\n## Who owns what\n\n| package | owns |\n|---|---|\n| `node` | wiring, `not/a/package` in the text |\n| `a/b`, `c` | two |\n## Next\n| `nor/this` | y |\n")
	if got, want := Owners(doc), []string{"node", "a/b", "c"}; !slices.Equal(got, want) {
		t.Errorf("Owners = %v, want %v", got, want)
	}
}
