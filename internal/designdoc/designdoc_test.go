package designdoc

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// root is the module's root, two levels above this package.
const root = "../.."

// TestCitationsResolve walks every Go file of the tree (third_party and this
// package's own fixtures aside) and fails on an invariant that docs/DESIGN.md
// does not define, or on a "DESIGN.md" that does not say docs/.
func TestCitationsResolve(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "DESIGN.md"))
	if err != nil {
		t.Fatal(err)
	}
	defined := Invariants(doc)
	if len(defined) == 0 {
		t.Fatal("docs/DESIGN.md: no numbered invariants under a heading that names invariants")
	}
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "third_party", "designdoc", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		rel, _ := filepath.Rel(root, path)
		cites, err := Citations(rel, src)
		if err != nil {
			t.Error(err)
		}
		for _, c := range cites {
			switch {
			case c.Bare:
				t.Errorf("%s:%d: cites DESIGN.md; write docs/DESIGN.md", rel, c.Line)
			case c.Invariant != 0 && !slices.Contains(defined, c.Invariant):
				t.Errorf("%s:%d: cites invariant %d; docs/DESIGN.md defines %v", rel, c.Line, c.Invariant, defined)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("walked %d Go files under %s; expected the whole tree", files, root)
	}
}

// TestInvariantsNumbered holds docs/DESIGN.md to 1, 2, 3, ... in order, so a
// number, once given, keeps its meaning.
func TestInvariantsNumbered(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "DESIGN.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range Invariants(doc) {
		if n != i+1 {
			t.Fatalf("invariant at position %d is numbered %d", i+1, n)
		}
	}
}

func TestCitations(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []Citation
	}{
		{"none", "package p\n// nothing here\nvar s = \"DESIGN.md\"\n", nil},
		{"one", "package p\n\n// the truth (invariant 3).\n", []Citation{{Line: 3, Invariant: 3}}},
		{"list", "package p\n// invariants 3, 5 and 7\n", []Citation{{Line: 2, Invariant: 3}, {Line: 2, Invariant: 5}, {Line: 2, Invariant: 7}}},
		{"wrapped", "package p\n// the truth, invariant\n// 3) more\n", []Citation{{Line: 2, Invariant: 3}}},
		{"string", "package p\nvar e = \"over one packet (invariant 8)\"\n", []Citation{{Line: 2, Invariant: 8}}},
		{"block", "package p\n/* a\n   Invariant 2 */\n", []Citation{{Line: 3, Invariant: 2}}},
		{"bare", "package p\n// see DESIGN.md\n", []Citation{{Line: 2, Bare: true}}},
		{"prefixed", "package p\n// see docs/DESIGN.md\n", nil},
		{"no number", "package p\n// checks the invariants: all\n", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Citations("x.go", []byte(tt.src))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestInvariants(t *testing.T) {
	doc := "# D\n1. not this\n## Cluster invariants\nintro\n1. a\n   more\n2. b\n10. c\n## Next\n3. not this\n"
	if got, want := Invariants([]byte(doc)), []int{1, 2, 10}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}
