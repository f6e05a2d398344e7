package devsync

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// event is one dispatched server-sent event.
type event struct {
	name string // "message" when the stream named none
	data []byte
}

// sseReader parses a text/event-stream as the HTML spec says: lines end in
// LF, CRLF or CR; a line starting with ':' is a comment; "field: value"
// (one space after the colon dropped); data lines join with LF; a blank line
// dispatches; id and retry are read and ignored; an event without data is
// not dispatched. A line longer than maxLine or an event whose data grows
// past maxEvent is an error: the caller drops the connection.
// A lone CR at the very end of what has arrived waits for the next byte to
// know whether an LF follows (the Go hub never sends a lone CR).
type sseReader struct {
	sc       *bufio.Scanner
	maxLine  int
	maxEvent int
	first    bool
	// activity is called for every line read, comments included, so an
	// idle timer can tell a live stream from a dead one.
	activity func()
}

var errTooLong = errors.New("devsync: line longer than the limit")

func newSSEReader(r io.Reader, maxLine, maxEvent int, activity func()) *sseReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, min(4096, maxLine+2)), maxLine+2) // +2 for the line end; the limit is the larger of cap and max
	sc.Split(scanLines)
	if activity == nil {
		activity = func() {}
	}
	return &sseReader{sc: sc, maxLine: maxLine, maxEvent: maxEvent, first: true, activity: activity}
}

// next returns the next event, io.EOF at a clean end of stream (an event
// cut short by the end is dropped, as the spec says), or an error.
func (p *sseReader) next() (event, error) {
	var (
		name    string
		data    []byte
		hasData bool
	)
	for p.sc.Scan() {
		p.activity()
		line := p.sc.Bytes()
		if p.first {
			line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
			p.first = false
		}
		if len(line) == 0 {
			if !hasData {
				name = ""
				continue
			}
			if name == "" {
				name = "message"
			}
			return event{name: name, data: bytes.TrimSuffix(data, []byte("\n"))}, nil
		}
		if line[0] == ':' {
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			value = bytes.TrimPrefix(value, []byte(" "))
		}
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if len(data)+len(value)+1 > p.maxEvent {
				return event{}, fmt.Errorf("devsync: event data longer than %d bytes", p.maxEvent)
			}
			data = append(data, value...)
			data = append(data, '\n')
			hasData = true
		}
	}
	if err := p.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return event{}, fmt.Errorf("%w of %d bytes", errTooLong, p.maxLine)
		}
		return event{}, err
	}
	return event{}, io.EOF
}

// scanLines splits at LF, CRLF or a lone CR.
func scanLines(data []byte, atEOF bool) (advance int, token []byte, err error) {
	i := bytes.IndexAny(data, "\r\n")
	switch {
	case i < 0:
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	case data[i] == '\n':
		return i + 1, data[:i], nil
	case i+1 < len(data):
		if data[i+1] == '\n' {
			return i + 2, data[:i], nil
		}
		return i + 1, data[:i], nil
	case atEOF:
		return i + 1, data[:i], nil
	default:
		return 0, nil, nil // a CR last: wait to see if an LF follows
	}
}
