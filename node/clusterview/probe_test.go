package clusterview

import (
	"testing"
	"time"
)

func TestProbesSmooth(t *testing.T) {
	var p probes
	if p.get("ews1") != 0 {
		t.Fatal("unknown board must read 0 (unknown)")
	}
	p.observe("ews1", 80*time.Millisecond)
	if got := p.get("ews1"); got != 80*time.Millisecond {
		t.Fatalf("first probe %v", got)
	}
	p.observe("ews1", 160*time.Millisecond) // one slow probe moves it an eighth of the way
	if got := p.get("ews1"); got != 90*time.Millisecond {
		t.Fatalf("smoothed %v, want 90ms", got)
	}
	p.observe("ews2", probeTimeout)
	if p.get("ews2") != probeTimeout || p.get("ews1") != 90*time.Millisecond {
		t.Fatal("boards mixed up")
	}
}
