package httpx

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestReadBody(t *testing.T) {
	for _, c := range []struct {
		name, body string
		limit      int64
		wantErr    bool
	}{
		{"under the limit", "hello", 10, false},
		{"at the limit", "0123456789", 10, false},
		{"over the limit", "0123456789x", 10, true},
		{"empty", "", 10, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(c.body))
			b, err := ReadBody(r, c.limit)
			var tooBig *http.MaxBytesError
			if c.wantErr {
				if !errors.As(err, &tooBig) || tooBig.Limit != c.limit {
					t.Fatalf("ReadBody = %q, %v; want a MaxBytesError of %d", b, err, c.limit)
				}
				return
			}
			if err != nil || string(b) != c.body {
				t.Fatalf("ReadBody = %q, %v; want %q", b, err, c.body)
			}
		})
	}
}

// errReader fails every read: a body read twice would show.
type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("read twice") }

func TestWithBodyCarriesTheBytes(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("payload"))
	if _, ok := Body(r); ok {
		t.Fatal("Body of a request nothing read: ok")
	}
	b, err := ReadBody(r, 100)
	if err != nil {
		t.Fatal(err)
	}
	r = WithBody(r, b)
	got, ok := Body(r)
	if !ok || string(got) != "payload" {
		t.Fatalf("Body = %q, %v; want payload", got, ok)
	}
	if r.ContentLength != 7 {
		t.Fatalf("ContentLength = %d; want 7", r.ContentLength)
	}
	streamed, err := io.ReadAll(r.Body)
	if err != nil || string(streamed) != "payload" {
		t.Fatalf("r.Body reads %q, %v; want payload", streamed, err)
	}
	r.Body = io.NopCloser(errReader{}) // what a second read would meet
	if got, ok := Body(r); !ok || string(got) != "payload" {
		t.Fatalf("Body after the stream was used = %q, %v", got, ok)
	}
}
