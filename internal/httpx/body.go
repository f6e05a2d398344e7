package httpx

import (
	"bytes"
	"context"
	"io"
	"net/http"
)

// ReadBody is the one read of a request body on a board (the front door's,
// and the node's guard for bodies of unknown length): at most limit bytes,
// else a *http.MaxBytesError. r.Body is closed; it is not replaced
// (WithBody does that, once).
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	return b, nil
}

type bodyKey struct{}

// WithBody is r carrying its body b, read by ReadBody: every later step
// takes b from Body instead of reading again, and handlers that stream
// r.Body read a reader over the same bytes.
func WithBody(r *http.Request, b []byte) *http.Request {
	r = r.WithContext(context.WithValue(r.Context(), bodyKey{}, b))
	r.Body, r.ContentLength, r.TransferEncoding = io.NopCloser(bytes.NewReader(b)), int64(len(b)), nil
	return r
}

// Body is the body WithBody put on r; false when nothing read it yet.
func Body(r *http.Request) ([]byte, bool) {
	b, ok := r.Context().Value(bodyKey{}).([]byte)
	return b, ok
}
