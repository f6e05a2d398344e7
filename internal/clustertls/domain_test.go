package clustertls

import (
	"strings"
	"testing"
)

func TestCheckDomain(t *testing.T) {
	for _, c := range []struct {
		in, want string // want: "" accepted, else a part of the error
	}{
		{"ews.home.arpa", ""},
		{"ews.local", ""},
		{"boards.example.com", ""},
		{"a-b.c1", ""},
		{"", "empty"},
		{"lan", "one label"},
		{"local", "one label"},
		{"ews..lan", "empty label"},
		{".ews.lan", "empty label"},
		{"ews.lan.", "empty label"},
		{"-ews.lan", "starts or ends with -"},
		{"ews.lan-", "starts or ends with -"},
		{"EWS.lan", `has 'E'`},
		{"ews_1.lan", `has '_'`},
		{"ews lan.x", `has ' '`},
		{"*.ews.lan", `has '*'`},
		{"ews.lan/x", `has '/'`},
		{strings.Repeat("a", 64) + ".lan", "longer than 63"},
		{strings.Repeat("abcdefg.", 32) + "lan", "longer than 253"},
	} {
		err := CheckDomain(c.in)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.in, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "clustertls: ")):
			t.Errorf("%q: %v, want an error saying %q", c.in, err, c.want)
		}
	}
}
