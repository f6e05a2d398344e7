package firstrun

import (
	"fmt"
	"strings"
	"testing"
)

// Start's boards and suffix: names, or names with addresses (then the
// peers), this board added first when missing; bad input is refused with
// what is wrong, prefixed with the package.
func TestParsePlan(t *testing.T) {
	many := make([]string, maxBoards+1)
	for i := range many {
		many[i] = fmt.Sprintf("b%d", i)
	}
	for _, c := range []struct {
		name, boards, domain string
		wantBoards, wantPeer string // boards joined by " "; peers by " "
		wantErr              string
	}{
		{"ews1", "", "", "ews1", "", ""},
		{"ews1", "ews1, ews2, ews3", "", "ews1 ews2 ews3", "", ""},
		{"ews2", "ews1 ews2\news3", "", "ews1 ews2 ews3", "", ""},
		{"kitchen", "ews1, ews2", "", "kitchen ews1 ews2", "", ""},
		{"ews1", "EWS1,Ews2", " EWS.Home.Arpa ", "ews1 ews2", "", ""},
		{"ews1", "ews1=10.0.0.11:7946, ews2=10.0.0.12:7946", "", "ews1 ews2", "ews1=10.0.0.11:7946 ews2=10.0.0.12:7946", ""},
		{"ews1", "ews1=pi1.lan:7000,ews2=[fd00::2]:7946", "", "ews1 ews2", "ews1=pi1.lan:7000 ews2=[fd00::2]:7946", ""},
		{"ews1", strings.Join(many[:maxBoards], ","), "", "ews1 " + strings.Join(many[:maxBoards], " "), "", "at most 32"},
		{"b0", strings.Join(many[:maxBoards], ","), "", strings.Join(many[:maxBoards], " "), "", ""},
		{"ews1", strings.Join(many, ","), "", "", "", "33 boards: a cluster has at most 32"},
		{"ews1", "ews1, ews_2", "", "", "", `board "ews_2": a board name is`},
		{"ews1", "ews1, -x", "", "", "", `board "-x"`},
		{"ews1", "ews1, <b>", "", "", "", `board "<b>"`},
		{"ews1", "ews1, ews1", "", "", "", "listed twice"},
		{"ews1", "ews1=10.0.0.11:7946, ews2", "", "", "", "every board its address"},
		{"ews1", "ews2=10.0.0.12:7946", "", "", "", "do not name this board"},
		{"ews1", "ews1=10.0.0.11", "", "", "", "want HOST:PORT"},
		{"ews1", "ews1=10.0.0.11:99999", "", "", "", "not a number from 1 to 65535"},
		{"ews1", "ews1=bad_host:7946", "", "", "", "neither an IP address nor a DNS name"},
		{"ews1", "", "lan", "", "", "one label"},
		{"ews1", "", "ews.lan/x", "", "", `has '/'`},
		{"ews1", "", "*.ews.lan", "", "", `has '*'`},
		{"ews1", "", "ews..lan", "", "", "empty label"},
	} {
		p, err := parsePlan(c.name, c.boards, c.domain)
		if c.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), c.wantErr) || !strings.HasPrefix(err.Error(), "firstrun: ") {
				t.Errorf("%s %q %q: %v, want an error saying %q", c.name, c.boards, c.domain, err, c.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %q %q: %v", c.name, c.boards, c.domain, err)
			continue
		}
		if got := strings.Join(p.boards, " "); got != c.wantBoards {
			t.Errorf("%s %q: boards %q, want %q", c.name, c.boards, got, c.wantBoards)
		}
		if got := strings.Join(p.peers(), " "); got != c.wantPeer {
			t.Errorf("%s %q: peers %q, want %q", c.name, c.boards, got, c.wantPeer)
		}
	}
}

func TestPlanScopeAndHosts(t *testing.T) {
	p, err := parsePlan("ews1", "ews1=10.0.0.11:7000, ews2=pi2.lan:7946", "ews.home.arpa")
	if err != nil {
		t.Fatal(err)
	}
	sc := p.scope()
	if strings.Join(sc.Boards, " ") != "ews1 ews2" || strings.Join(sc.DNS, " ") != "pi2.lan ews.home.arpa" || len(sc.Nets) != 1 || sc.Nets[0].String() != "10.0.0.11/32" {
		t.Errorf("scope %+v", sc)
	}
	if got := strings.Join(p.certHosts("ews2"), " "); got != "pi2.lan ews2.ews.home.arpa" {
		t.Errorf("ews2's hosts %q", got)
	}
	if p.gossip() != ":7000" {
		t.Errorf("gossip %q", p.gossip())
	}
	if got := mintCommand(p, "ews2"); got != "ews cluster board ews2 --addr pi2.lan --addr ews2.ews.home.arpa --bundle admin.bundle --out ews2.board.bundle" {
		t.Errorf("command %q", got)
	}
}

func TestProposeBoards(t *testing.T) {
	for in, want := range map[string]string{"ews1": "ews1, ews2, ews3", "pi9": "pi9, pi10, pi11", "kitchen": "kitchen", "7": "7"} {
		if got := proposeBoards(in); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}
