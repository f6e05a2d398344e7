package devsync

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestSSEReader(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    []event // then io.EOF unless wantErr
		wantErr string
	}{
		{"hub frames", "retry: 2000\n\nevent: devices\ndata: []\n\n: ping\n\nevent: device\ndata: {}\n\n",
			[]event{{"devices", []byte("[]")}, {"device", []byte("{}")}}, ""},
		{"CRLF", "event: device\r\ndata: 1\r\n\r\n", []event{{"device", []byte("1")}}, ""},
		{"lone CR", "event: device\rdata: 1\r\r", []event{{"device", []byte("1")}}, ""},
		{"multi-line data", "data: a\ndata:b\ndata\n\n", []event{{"message", []byte("a\nb\n")}}, ""},
		{"BOM and no space", "\xef\xbb\xbfevent:x\ndata:y\n\n", []event{{"x", []byte("y")}}, ""},
		{"event without data resets name", "event: x\n\ndata: y\n\n", []event{{"message", []byte("y")}}, ""},
		{"id, retry and unknown fields ignored", "id: 7\nretry: x\nfoo: bar\ndata: z\n\n", []event{{"message", []byte("z")}}, ""},
		{"cut short at EOF is dropped", "data: a\n\ndata: b\n", []event{{"message", []byte("a")}}, ""},
		{"line too long", "data: " + strings.Repeat("x", 100) + "\n\n", nil, "longer than the limit"},
		{"event too long", strings.Repeat("data: "+strings.Repeat("x", 30)+"\n", 3) + "\n", nil, "event data longer"},
		{"binary junk", "\x00\x01\xff\xfe\n\n", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := 0
			r := newSSEReader(strings.NewReader(tt.in), 64, 64, func() { lines++ })
			for i := 0; ; i++ {
				ev, err := r.next()
				if err != nil {
					switch {
					case tt.wantErr != "":
						if !strings.Contains(err.Error(), tt.wantErr) {
							t.Fatalf("error %v, want one with %q", err, tt.wantErr)
						}
					case !errors.Is(err, io.EOF):
						t.Fatalf("error %v", err)
					}
					if i != len(tt.want) {
						t.Fatalf("got %d events, want %d", i, len(tt.want))
					}
					break
				}
				if i >= len(tt.want) {
					t.Fatalf("extra event %q %q", ev.name, ev.data)
				}
				if ev.name != tt.want[i].name || string(ev.data) != string(tt.want[i].data) {
					t.Fatalf("event %d = %q %q, want %q %q", i, ev.name, ev.data, tt.want[i].name, tt.want[i].data)
				}
			}
			if lines == 0 && tt.wantErr == "" {
				t.Fatal("activity never called")
			}
		})
	}
}
