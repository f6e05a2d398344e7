package node

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/openapi"
)

// TestOpenAPIRoute: every board serves the API's document at
// GET /api/openapi.json, as JSON, without credentials, whatever its auth.
func TestOpenAPIRoute(t *testing.T) {
	tests := []struct {
		name string
		http string // the [http] section
	}{
		{"no auth", "auth = \"none\"\n"},
		{"token, read_auth", "auth = \"token\"\ntoken = \"openapi-test-token-1\"\nread_auth = true\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := config.Parse("test.toml", []byte("[node]\nname = \"ews1\"\nhttp = \"127.0.0.1:0\"\n[http]\n"+tt.http+"shutdown_timeout = \"5s\"\n"))
			if err != nil {
				t.Fatal(err)
			}
			_, base, _, _ := startNode(t, cfg)
			resp, err := http.Get(base + "/api/openapi.json")
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("got %d %q: %s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
			}
			var doc struct {
				OpenAPI string         `json:"openapi"`
				Paths   map[string]any `json:"paths"`
			}
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			if doc.OpenAPI != "3.1.0" || doc.Paths["/api/openapi.json"] == nil {
				t.Errorf("openapi %q, %d paths: not the document", doc.OpenAPI, len(doc.Paths))
			}
			want, err := openapi.JSON()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, want) {
				t.Error("the answer is not internal/openapi's document")
			}
		})
	}
}
