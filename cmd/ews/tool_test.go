package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestTool: a tool this build has runs as itself; one it left out (every
// tool in the lite build) says so on stderr and exits 2.
func TestTool(t *testing.T) {
	for name := range tools {
		if tool(name) == nil {
			t.Errorf("tool(%q) is nil", name)
		}
	}
	tests := []struct {
		name     string
		wantCode int
		wantErr  string
	}{
		{"left-out", exitUsage, `ews left-out: not in the lite build of ews`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if code := tool(tt.name)(nil, &stdout, &stderr); code != tt.wantCode {
				t.Errorf("exit %d, want %d", code, tt.wantCode)
			}
			if !strings.Contains(stderr.String(), tt.wantErr) || stdout.Len() != 0 {
				t.Errorf("stdout %q, stderr %q; want stderr to say %q", stdout.String(), stderr.String(), tt.wantErr)
			}
		})
	}
}
