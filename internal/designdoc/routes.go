package designdoc

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// module is the import path of the tree's root.
const module = "github.com/ews-firmware/ews/"

// Route is one pattern a router mounts (a ServeMux pattern such as
// "GET /api/devices/{name}") and the file:line:col that mounts it.
type Route struct{ Pattern, At string }

// MountedRoutes are the patterns of every Handle/HandleFunc call with a
// pattern the walk can evaluate, in the Go files under dir (tests aside),
// sorted; root is the module's root, for the import paths of the
// constants a pattern names. A pattern the walk cannot read is an error
// beside the routes it could.
func MountedRoutes(root, dir string) ([]Route, error) {
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
		return nil, fmt.Errorf("designdoc: walk %s: %w", dir, err)
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
	var out []Route
	var errs []error
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
					errs = append(errs, fmt.Errorf("designdoc: %s: a route pattern the walk cannot read; write it as a string or constants", at))
					return true
				}
				out = append(out, Route{Pattern: p, At: at})
				return true
			})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pattern < out[j].Pattern })
	return out, errors.Join(errs...)
}
