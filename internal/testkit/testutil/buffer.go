package testutil

import (
	"bytes"
	"log/slog"
	"sync"
)

// Buffer is a bytes.Buffer safe to read while others write: a process's
// output, or the sink of a logger the code's goroutines write to.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Logger is a text logger writing into s.
func (s *Buffer) Logger() *slog.Logger { return slog.New(slog.NewTextHandler(s, nil)) }
