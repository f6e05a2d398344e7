package designdoc

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// module is the import path of the tree's root.
const module = "github.com/ews-firmware/ews/"

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
	routes := mountedRoutes(t, filepath.Join(root, "node"))
	if len(routes) < 40 { // the walk itself must see the tree's routes
		t.Fatalf("found %d routes; the walk is broken", len(routes))
	}
	for _, r := range routes {
		path := r.pattern
		if _, p, ok := strings.Cut(path, " "); ok {
			path = p
		}
		path = strings.TrimSuffix(path, "{$}")
		if !strings.Contains(table, path) {
			t.Errorf("%s: route %q is not in docs/DESIGN.md's HTTP contract (with the principal it accepts)", r.at, r.pattern)
		}
	}
}

type route struct{ pattern, at string }

// mountedRoutes are the patterns of every Handle/HandleFunc call with a
// pattern the walk can evaluate, under dir (tests aside).
func mountedRoutes(t *testing.T, dir string) []route {
	t.Helper()
	fset := token.NewFileSet()
	pkgs := map[string][]*ast.File{} // import path -> files
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		pkgs[module+filepath.ToSlash(rel)] = append(pkgs[module+filepath.ToSlash(rel)], f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{} // "importpath.Name" -> value
	for path, files := range pkgs {
		for _, f := range files {
			for _, decl := range f.Decls {
				g, ok := decl.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i < len(vs.Values) {
							if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
								v, _ := strconv.Unquote(lit.Value)
								consts[path+"."+name.Name] = v
							}
						}
					}
				}
			}
		}
	}
	var out []route
	for path, files := range pkgs {
		for _, f := range files {
			imports := map[string]string{}
			for _, im := range f.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				name := p[strings.LastIndex(p, "/")+1:]
				if im.Name != nil {
					name = im.Name.Name
				}
				imports[name] = p
			}
			var eval func(e ast.Expr) (string, bool)
			eval = func(e ast.Expr) (string, bool) {
				switch e := e.(type) {
				case *ast.BasicLit:
					if e.Kind == token.STRING {
						v, err := strconv.Unquote(e.Value)
						return v, err == nil
					}
				case *ast.BinaryExpr:
					a, ok1 := eval(e.X)
					b, ok2 := eval(e.Y)
					return a + b, ok1 && ok2 && e.Op == token.ADD
				case *ast.Ident:
					v, ok := consts[path+"."+e.Name]
					return v, ok
				case *ast.SelectorExpr:
					if x, ok := e.X.(*ast.Ident); ok {
						v, ok := consts[imports[x.Name]+"."+e.Sel.Name]
						return v, ok
					}
				}
				return "", false
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != 2 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || (sel.Sel.Name != "Handle" && sel.Sel.Name != "HandleFunc") {
					return true
				}
				at := fset.Position(call.Pos()).String()
				switch a := call.Args[0].(type) {
				case *ast.Ident:
					if consts[path+"."+a.Name] == "" {
						return true // a variable: a test's extra routes (node.WithRoutes), or not a mux (slog's Handle(ctx, r))
					}
				case *ast.BasicLit, *ast.BinaryExpr, *ast.SelectorExpr:
				default:
					return true // not a pattern (slog's Handle(context.Background(), r))
				}
				p, ok := eval(call.Args[0])
				if !ok {
					t.Errorf("%s: a route pattern the walk cannot read; write it as a string or constants", at)
					return true
				}
				out = append(out, route{pattern: p, at: at})
				return true
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].pattern < out[j].pattern })
	return out
}
