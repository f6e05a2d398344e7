package clustertls

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// GET CAPath: the CA's PEM with its fingerprint as browsers show it; no
// fingerprint on a board without TLS.
func TestCAHandler(t *testing.T) {
	certDER, keyDER, err := NewCA(time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := ParseCA(certDER, keyDER)
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	CAHandler(ca).ServeHTTP(w, httptest.NewRequest(http.MethodGet, CAPath, nil))
	fp := w.Header().Get("X-Ews-CA-Sha256")
	if w.Code != http.StatusOK || !bytes.Equal(w.Body.Bytes(), ca.PEM) || fp != ca.Fingerprint() || len(fp) != 32*3-1 || strings.ToUpper(fp) != fp {
		t.Fatalf("%d, fingerprint %q, body %d bytes", w.Code, fp, w.Body.Len())
	}
	if (*CA)(nil).Fingerprint() != "" {
		t.Fatal("a board without TLS has a CA fingerprint")
	}
}
