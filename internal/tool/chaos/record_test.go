package chaos

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestRecordsRoundTrip(t *testing.T) {
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	in := []Record{{ID: 1, Key: "k", Board: "ews1", Start: t0, End: t0.Add(time.Millisecond), Status: 503, RetryAfter: "1"},
		{ID: 1, Attempt: 1, Board: "ews2", Start: t0, End: t0, Err: "connection reset"}}
	var buf bytes.Buffer
	if err := WriteRecords(&buf, in); err != nil {
		t.Fatal(err)
	}
	out, err := ReadRecords(&buf)
	if err != nil || !reflect.DeepEqual(in, out) {
		t.Fatalf("round trip: %+v, %v", out, err)
	}
	if _, err := ReadRecords(strings.NewReader("{\"id\":1}\nnot json\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("bad line: %v, want it named", err)
	}
}

func TestParseRan(t *testing.T) {
	log := `{"time":"x","level":"DEBUG","msg":"devapi: action ran","device":"relay1","action":"toggle","key":"abc"}
{"time":"x","level":"INFO","msg":"http: listening"}
fatal error: concurrent map writes devapi: action ran
{"time":"x","level":"DEBUG","msg":"devapi: action ran","device":"pump1","action":"turn_on","key":""}
`
	got, err := ParseRan(strings.NewReader(log), "ews2", "devapi: action ran")
	want := []Ran{{Board: "ews2", Device: "relay1", Action: "toggle", Key: "abc"}, {Board: "ews2", Device: "pump1", Action: "turn_on"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("ParseRan = %+v, %v; want %+v", got, err, want)
	}
}
