package designdoc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryRouteInTheTrustTable walks the routers of the tree: every
// pattern the board's packages mount (mux.Handle / HandleFunc, the
// constants they name resolved) must be listed in docs/DESIGN.md's HTTP
// contract, which names the principal each accepts (issue 50: "a test
// walks the router and fails on a route not in the table"). A new route
// fails here until the table says who may call it.
func TestEveryRouteInTheTrustTable(t *testing.T) {
	design, err := os.ReadFile(filepath.Join(root, "docs", "DESIGN.md"))
	if err != nil {
		t.Fatal(err)
	}
	table := string(design)
	if i := strings.Index(table, "## HTTP contract"); i >= 0 {
		table = table[i:]
	}
	routes, err := MountedRoutes(root, filepath.Join(root, "node"))
	if err != nil {
		t.Error(err)
	}
	if len(routes) < 40 { // the walk itself must see the tree's routes
		t.Fatalf("found %d routes; the walk is broken", len(routes))
	}
	for _, r := range routes {
		path := r.Pattern
		if _, p, ok := strings.Cut(path, " "); ok {
			path = p
		}
		path = strings.TrimSuffix(path, "{$}")
		if !strings.Contains(table, path) {
			t.Errorf("%s: route %q is not in docs/DESIGN.md's HTTP contract (with the principal it accepts)", r.At, r.Pattern)
		}
	}
}
