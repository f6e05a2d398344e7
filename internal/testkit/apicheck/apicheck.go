// Package apicheck holds the answers a test receives to docs/openapi.yaml: an http.RoundTripper that reports each answer whose status, headers or body the document does not allow.
package apicheck

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/pb33f/libopenapi"
	validator "github.com/pb33f/libopenapi-validator"
	"github.com/pb33f/libopenapi/datamodel"

	"github.com/ews-firmware/ews/internal/openapi"
)

// maxBody bounds the answer read for a check; a longer one is not checked.
const maxBody = 4 << 20

// the validator of the document the binary serves (openapi.JSON: the YAML's
// copy, held equal to it by internal/openapi's test), built once.
var load = sync.OnceValues(func() (validator.Validator, error) {
	spec, err := openapi.JSON()
	if err != nil {
		return nil, err
	}
	cfg := datamodel.NewDocumentConfiguration()
	cfg.Logger = slog.New(slog.DiscardHandler)
	d, err := libopenapi.NewDocumentWithConfiguration(spec, cfg)
	if err != nil {
		return nil, fmt.Errorf("apicheck: %w", err)
	}
	v, errs := validator.NewValidator(d)
	if len(errs) > 0 {
		return nil, fmt.Errorf("apicheck: %v", errs[0])
	}
	return v, nil
})

// Ready builds the validator now (it takes a while once), so the first
// checked answer does not spend its client's timeout on it.
func Ready() error {
	_, err := load()
	return err
}

// Check answers what the document says is wrong with resp, the answer to
// req (nil: nothing). resp's body is read and put back.
func Check(req *http.Request, resp *http.Response) []string {
	if skip(req, resp) {
		return nil
	}
	v, err := load()
	if err != nil {
		return []string{err.Error()}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err != nil || len(body) > maxBody {
		return nil // not ours to judge: the caller sees the same error or the whole body
	}
	cp := *resp
	cp.Body = io.NopCloser(bytes.NewReader(body))
	ok, verrs := v.ValidateHttpResponse(req, &cp)
	if ok {
		return nil
	}
	out := make([]string, 0, len(verrs))
	for _, e := range verrs {
		msg := e.Message
		if e.Reason != "" && e.Reason != e.Message {
			msg += ": " + e.Reason
		}
		for _, se := range e.SchemaValidationErrors {
			msg += fmt.Sprintf(" [%s: %s]", se.FieldPath, se.Reason)
		}
		out = append(out, fmt.Sprintf("%s %s → %d: %s (body %.300s)", req.Method, req.URL.Path, resp.StatusCode, msg, body))
	}
	return out
}

// skip says which answers are not held to the document: event streams and
// upgrades (never read whole), HEAD, CGI programs' own answers, and the
// plain port's redirect to HTTPS.
func skip(req *http.Request, resp *http.Response) bool {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	p := req.URL.Path
	switch {
	case req.Method == http.MethodHead, resp.StatusCode == http.StatusSwitchingProtocols:
		return true
	case ct == "text/event-stream":
		return true
	case strings.HasPrefix(p, "/cgi-bin/"):
		return true
	case resp.StatusCode == http.StatusPermanentRedirect:
		// the plain port of a board with TLS sends every route to HTTPS, as
		// the document's description says once rather than per operation
		to, err := url.Parse(resp.Header.Get("Location"))
		return err == nil && to.Scheme == "https" && to.Path == p
	}
	return false
}

// Transport is Base (http.DefaultTransport when nil) with every answer
// checked by Check; Report is told each problem (from any goroutine).
type Transport struct {
	Base   http.RoundTripper
	Report func(problem string)
}

// RoundTrip sends req and checks its answer.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	resp, err := base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	for _, p := range Check(req, resp) {
		t.Report(p)
	}
	return resp, nil
}

// Problems collects what Transports report, for a test (or TestMain) to
// fail on. Safe for concurrent use.
type Problems struct {
	mu   sync.Mutex
	seen map[string]bool
	list []string
}

// Add records p once (the same problem with another body once too).
func (ps *Problems) Add(p string) {
	key, _, _ := strings.Cut(p, " (body ")
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if ps.seen == nil {
		ps.seen = map[string]bool{}
	}
	if !ps.seen[key] {
		ps.seen[key] = true
		ps.list = append(ps.list, p)
	}
}

// All returns the problems recorded, first first.
func (ps *Problems) All() []string {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return append([]string(nil), ps.list...)
}
