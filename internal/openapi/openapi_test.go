package openapi

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi/datamodel"
	"go.yaml.in/yaml/v3"

	"github.com/ews-firmware/ews/internal/designdoc"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
	"github.com/ews-firmware/ews/node/dispatch/place"
)

var update = flag.Bool("update", false, "rewrite openapi.json from docs/openapi.yaml")

// root is the module's root, two levels above this package.
const root = "../.."

// fromYAML reads docs/openapi.yaml and returns it as the JSON the binary
// embeds: compact, keys sorted, a newline at the end.
func fromYAML(t *testing.T) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(root, "docs", "openapi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := yaml.Unmarshal(src, &v); err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	v, err = jsonable(v)
	if err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// jsonable turns what YAML decodes into what JSON encodes: mappings with
// string keys only.
func jsonable(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			j, err := jsonable(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			v[k] = j
		}
		return v, nil
	case map[any]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			s, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("key %v is a %T: quote it", k, k)
			}
			j, err := jsonable(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s, err)
			}
			out[s] = j
		}
		return out, nil
	case []any:
		for i, e := range v {
			j, err := jsonable(e)
			if err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
			v[i] = j
		}
		return v, nil
	}
	return v, nil
}

// TestJSONCopy holds the embedded openapi.json.gz to docs/openapi.yaml,
// byte for byte once inflated; -update (go generate) rewrites it.
func TestJSONCopy(t *testing.T) {
	want := fromYAML(t)
	if *update {
		var b bytes.Buffer
		zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := zw.Write(want); err != nil {
			t.Fatal(err)
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		testutil.WriteFile(t, "openapi.json.gz", b.Bytes(), 0o644)
		return
	}
	got, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("internal/openapi/openapi.json.gz is not docs/openapi.yaml: run go generate ./internal/openapi")
	}
}

// document decodes the embedded document.
func document(t *testing.T) map[string]any {
	t.Helper()
	b, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// check validates spec as OpenAPI: libopenapi's model (references resolve)
// and the OpenAPI JSON schema of its version.
func check(spec []byte) []string {
	cfg := datamodel.NewDocumentConfiguration()
	cfg.Logger = slog.New(slog.DiscardHandler) // the problems come back as errors
	d, err := libopenapi.NewDocumentWithConfiguration(spec, cfg)
	if err != nil {
		return []string{err.Error()}
	}
	var problems []string
	if d.GetVersion() != "3.1.0" {
		problems = append(problems, "version "+d.GetVersion()+", want 3.1.0")
	}
	if _, err := d.BuildV3Model(); err != nil {
		problems = append(problems, err.Error())
	}
	v, errs := validator.NewValidator(d)
	for _, err := range errs {
		problems = append(problems, err.Error())
	}
	if v == nil {
		return problems
	}
	if ok, verrs := v.ValidateDocument(); !ok {
		for _, e := range verrs {
			problems = append(problems, e.Error())
		}
		if len(verrs) == 0 {
			problems = append(problems, "invalid")
		}
	}
	return problems
}

// TestValid checks the document against OpenAPI 3.1, and that the check
// refuses documents broken the ways an edit breaks them.
func TestValid(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(m map[string]any)
		valid bool
	}{
		{"the document", func(map[string]any) {}, true},
		{"no info", func(m map[string]any) { delete(m, "info") }, false},
		{"a response without description", func(m map[string]any) {
			ok := m["paths"].(map[string]any)["/healthz"].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)["200"].(map[string]any)
			delete(ok, "description")
		}, false},
		{"a dangling reference", func(m map[string]any) {
			delete(m["components"].(map[string]any)["schemas"].(map[string]any), "Error")
		}, false},
		{"an unknown security scheme type", func(m map[string]any) {
			m["components"].(map[string]any)["securitySchemes"].(map[string]any)["boardCert"].(map[string]any)["type"] = "certificate"
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := document(t)
			tt.edit(m)
			spec, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			problems := check(spec)
			switch {
			case tt.valid && len(problems) > 0:
				t.Errorf("not valid OpenAPI 3.1:\n%s", strings.Join(problems, "\n"))
			case !tt.valid && len(problems) == 0:
				t.Error("the check took it")
			}
		})
	}
}

// methods are the operations a path item may hold.
var methods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// documented is every "METHOD /path" of the document.
func documented(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for p, item := range document(t)["paths"].(map[string]any) {
		for m := range item.(map[string]any) {
			if slices.Contains(methods, m) {
				out[strings.ToUpper(m)+" "+p] = true
			}
		}
	}
	return out
}

// covers reports whether the operation op ("METHOD /path" of the
// document) is what the mux pattern serves: the same method and path; a
// pattern without a method serves any; "/{$}" is "/"; a subtree pattern
// ("/cgi-bin/") is its root or one {param} under it.
func covers(pattern, op string) bool {
	method, path, ok := strings.Cut(pattern, " ")
	if !ok {
		method, path = "", pattern
	}
	opMethod, opPath, _ := strings.Cut(op, " ")
	if method != "" && method != opMethod {
		return false
	}
	if p, ok := strings.CutSuffix(path, "{$}"); ok {
		return opPath == p
	}
	if opPath == path {
		return true
	}
	if !strings.HasSuffix(path, "/") {
		return false
	}
	rest, ok := strings.CutPrefix(opPath, path)
	return ok && strings.HasPrefix(rest, "{") && strings.HasSuffix(rest, "}") && !strings.Contains(rest, "/")
}

// TestEveryRoute holds the document to the routes node/ mounts (walked as
// internal/designdoc walks them for docs/DESIGN.md): each is documented,
// and the document names no operation that no route serves.
func TestEveryRoute(t *testing.T) {
	routes, err := designdoc.MountedRoutes(root, filepath.Join(root, "node"))
	if err != nil {
		t.Error(err)
	}
	if len(routes) < 40 {
		t.Fatalf("found %d routes; the walk is broken", len(routes))
	}
	// the placement channel is taken by the front door on its Upgrade
	// header, before any mux (node/dispatch/placechan.go)
	routes = append(routes, designdoc.Route{Pattern: "GET " + place.Path, At: "node/dispatch/placechan.go"})
	ops := documented(t)
	for _, r := range routes {
		if !slices.ContainsFunc(slices.Collect(maps.Keys(ops)), func(op string) bool { return covers(r.Pattern, op) }) {
			t.Errorf("%s: route %q is not in docs/openapi.yaml", r.At, r.Pattern)
		}
	}
	for _, op := range slices.Sorted(maps.Keys(ops)) {
		if !slices.ContainsFunc(routes, func(r designdoc.Route) bool { return covers(r.Pattern, op) }) {
			t.Errorf("docs/openapi.yaml: %s: no route of node/ serves it", op)
		}
	}
}

func TestCovers(t *testing.T) {
	tests := []struct {
		pattern, op string
		want        bool
	}{
		{"GET /api/devices/{name}", "GET /api/devices/{name}", true},
		{"GET /api/devices/{name}", "POST /api/devices/{name}", false},
		{"GET /api/devices/{name}", "GET /api/devices/{id}", false},
		{"GET /{$}", "GET /", true},
		{"GET /{$}", "GET /{file}", false},
		{"/", "GET /", true},
		{"/", "GET /{file}", true},
		{"/", "GET /a/{file}", false},
		{"/cgi-bin/", "POST /cgi-bin/{program}", true},
		{"/cgi-bin/", "GET /cgi-bin/{a}/{b}", false},
		{"/cgi-bin/", "GET /cgi-bin/x", false},
	}
	for _, tt := range tests {
		if got := covers(tt.pattern, tt.op); got != tt.want {
			t.Errorf("covers(%q, %q) = %v, want %v", tt.pattern, tt.op, got, tt.want)
		}
	}
}

// TestHandler: GET answers 200 application/json, the document, gzipped
// to a client that takes gzip; its ETag gets 304.
func TestHandler(t *testing.T) {
	want := fromYAML(t)
	tests := []struct {
		name, method string
		hdr          map[string]string
		status       int
		gzipped      bool
	}{
		{"plain", http.MethodGet, nil, http.StatusOK, false},
		{"gzip", http.MethodGet, map[string]string{"Accept-Encoding": "br, gzip"}, http.StatusOK, true},
		{"gzip refused", http.MethodGet, map[string]string{"Accept-Encoding": "gzip;q=0"}, http.StatusOK, false},
		{"head", http.MethodHead, nil, http.StatusOK, false},
		{"not modified", http.MethodGet, map[string]string{"If-None-Match": etag()}, http.StatusNotModified, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := httptest.NewRequest(tt.method, "/api/openapi.json", nil)
			for k, v := range tt.hdr {
				req.Header.Set(k, v)
			}
			rec := httptest.NewRecorder()
			Handler().ServeHTTP(rec, req)
			if rec.Code != tt.status {
				t.Fatalf("got %d, want %d", rec.Code, tt.status)
			}
			if got := rec.Header().Get("ETag"); got != etag() {
				t.Errorf("ETag %q, want %q", got, etag())
			}
			if tt.status != http.StatusOK {
				return
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			body := rec.Body.Bytes()
			if ce := rec.Header().Get("Content-Encoding"); (ce == "gzip") != tt.gzipped {
				t.Fatalf("Content-Encoding %q", ce)
			}
			if tt.method == http.MethodHead {
				if len(body) != 0 {
					t.Errorf("HEAD answered %d bytes", len(body))
				}
				return
			}
			if tt.gzipped {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				if body, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			var got, wantDoc any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(want, &wantDoc); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, wantDoc) {
				t.Error("the answer is not docs/openapi.yaml")
			}
		})
	}
}
