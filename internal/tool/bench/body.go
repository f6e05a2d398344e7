package bench

import (
	"encoding/json"
	"io"
	"net/http"
)

// body is a request body read from a shared byte slice: one small value per request, the bytes
// themselves are never copied.
type body struct {
	b   []byte
	off int
}

func (r *body) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	n := copy(p, r.b[r.off:])
	r.off += n
	return n, nil
}

func (r *body) Close() error { return nil }

// setBody prepares the template req to carry b: length, a GetBody for retries and a
// Content-Type (JSON when b is valid JSON) unless the caller's headers set one.
func setBody(req *http.Request, b []byte) {
	req.ContentLength = int64(len(b))
	req.GetBody = func() (io.ReadCloser, error) { return &body{b: b}, nil }
	if req.Header.Get("Content-Type") == "" {
		if json.Valid(b) {
			req.Header.Set("Content-Type", "application/json")
		} else {
			req.Header.Set("Content-Type", "application/octet-stream")
		}
	}
}
