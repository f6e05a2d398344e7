package chaos

import (
	"strings"
	"testing"
	"time"
)

func hash(k string) string { return "h:" + k }

func TestCheck(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	rec := func(id, attempt, status int, key, board string, from, to int) Record {
		return Record{ID: id, Attempt: attempt, Status: status, Key: key, Board: board, Start: at(from), End: at(to)}
	}
	ran := func(keys ...string) []Ran {
		var out []Ran
		for _, k := range keys {
			out = append(out, Ran{Board: "ews1", Device: "relay1", Action: "toggle", Key: k})
		}
		return out
	}
	mistake := rec(9, 0, 404, "", "ews1", 0, 1)
	mistake.Mistake = true
	retry503 := rec(3, 0, 503, "k3", "ews2", 0, 1)
	retry503.RetryAfter = "1"
	tests := []struct {
		name    string
		in      Input
		want    []string // substrings of the violations, in order; none: OK
		lost    int
		excused int
		twice   int
	}{
		{name: "clean run", in: Input{
			Records: []Record{rec(1, 0, 200, "k1", "ews1", 0, 1), rec(2, 0, 200, "", "ews2", 0, 1), mistake,
				retry503, rec(3, 1, 200, "k3", "ews1", 2, 3)},
			Ran:   ran("h:k1", "", "h:k3"),
			Heals: []Heal{{Kind: KillMaster, Took: time.Second, OK: true}}, HealBound: 2 * time.Second}},
		{name: "lost answer", in: Input{Records: []Record{rec(1, 0, 0, "k1", "ews1", 0, 1)}}, want: []string{"no answer after 1s (), no fault on"}, lost: 1},
		{name: "no answer from a killed board is excused", in: Input{Records: []Record{rec(1, 0, 0, "k1", "ews1", 0, 2)},
			Windows: []Window{{Board: "ews1", From: at(1), To: at(5), Excuse: true}}}, excused: 1},
		{name: "a slow board is not excused", in: Input{Records: []Record{rec(1, 0, 0, "k1", "ews1", 0, 2)},
			Windows: []Window{{Board: "ews1", Kind: SlowLink, From: at(1), To: at(5)}}}, want: []string{"during slow-link of ews1"}, lost: 1},
		{name: "a tolerated fault's loss is counted, not a violation", in: Input{Records: []Record{rec(1, 0, 0, "k1", "ews1", 0, 2)},
			Windows: []Window{{Board: "ews1", Kind: SlowLink, From: at(1), To: at(5)}}, Tolerate: map[Kind]bool{SlowLink: true}}, lost: 1},
		{name: "a tolerated fault on another board does not excuse", in: Input{Records: []Record{rec(1, 0, 0, "k1", "ews1", 0, 2)},
			Windows: []Window{{Board: "ews2", Kind: SlowLink, From: at(1), To: at(5)}}, Tolerate: map[Kind]bool{SlowLink: true}}, want: []string{"during slow-link of ews2"}, lost: 1},
		{name: "window of another board", in: Input{Records: []Record{rec(1, 0, 0, "k1", "ews1", 0, 2)},
			Windows: []Window{{Board: "ews2", Kind: KillMaster, From: at(1), To: at(5), Excuse: true}}}, want: []string{"no answer after 2s (), during kill-master of ews2"}, lost: 1},
		{name: "logged twice", in: Input{Records: []Record{rec(1, 0, 200, "", "ews1", 0, 1), rec(1, 0, 200, "", "ews1", 0, 1)}},
			want: []string{"logged twice"}},
		{name: "502 keyed", in: Input{Records: []Record{rec(1, 0, 502, "k1", "ews1", 0, 1)}}, want: []string{"502 for a request with an Idempotency-Key"}},
		{name: "502 unkeyed may have run", in: Input{Records: []Record{rec(1, 0, 502, "", "ews1", 0, 1)}}},
		{name: "503 without Retry-After", in: Input{Records: []Record{rec(1, 0, 503, "", "ews1", 0, 1)}}, want: []string{"503 without Retry-After"}},
		{name: "4xx not a mistake", in: Input{Records: []Record{rec(1, 0, 404, "", "ews1", 0, 1)}}, want: []string{"404 for a well-formed request"}},
		{name: "409 on a keyed retry", in: Input{Records: []Record{retry503, rec(3, 1, 409, "k3", "ews1", 2, 3)}, Ran: ran("h:k3")}},
		{name: "409 on a first send", in: Input{Records: []Record{rec(1, 0, 409, "k1", "ews1", 0, 1)}, Ran: ran("h:k1")}, want: []string{"409 for a well-formed"}},
		{name: "408 on a slowed link: the header did not arrive, nothing ran", in: Input{Records: []Record{rec(1, 0, 408, "", "ews1", 0, 6)},
			Windows: []Window{{Board: "ews1", Kind: SlowLink, From: at(1), To: at(5)}}}},
		{name: "408 while another board's link was slowed", in: Input{Records: []Record{rec(1, 0, 408, "", "ews1", 0, 6)},
			Windows: []Window{{Board: "ews2", Kind: SlowLink, From: at(1), To: at(5)}}}, want: []string{"408 while the board's link was not slowed"}},
		{name: "408 with no fault", in: Input{Records: []Record{rec(1, 0, 408, "", "ews1", 0, 1)}}, want: []string{"408 while"}},
		{name: "500", in: Input{Records: []Record{rec(1, 0, 500, "", "ews1", 0, 1)}}, want: []string{"status 500"}},
		{name: "ran twice", in: Input{Records: []Record{rec(1, 0, 200, "k1", "ews1", 0, 1)}, Ran: ran("h:k1", "h:k1")},
			want: []string{"ran 2 times"}, twice: 1},
		{name: "answered but never ran", in: Input{Records: []Record{rec(1, 0, 200, "k1", "ews1", 0, 1)}},
			want: []string{"no board ran its action"}},
		{name: "no master after heal", in: Input{Heals: []Heal{{Kind: PauseMaster}}}, want: []string{"no single master"}},
		{name: "heal too slow", in: Input{Heals: []Heal{{Kind: PartitionMaster, Took: 3 * time.Second, OK: true}}, HealBound: 2 * time.Second},
			want: []string{"took 3s, over the bound 2s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Hash = hash
			rep := Check(tt.in)
			if len(rep.Violations) != len(tt.want) {
				t.Fatalf("violations %q, want %d matching %q", rep.Violations, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(rep.Violations[i], w) {
					t.Errorf("violation %d = %q, want it to say %q", i, rep.Violations[i], w)
				}
			}
			if rep.OK() != (len(tt.want) == 0) {
				t.Errorf("OK() = %v with %d violations", rep.OK(), len(rep.Violations))
			}
			if rep.Lost != tt.lost || rep.Excused != tt.excused || rep.RanTwice != tt.twice {
				t.Errorf("lost %d excused %d twice %d, want %d %d %d", rep.Lost, rep.Excused, rep.RanTwice, tt.lost, tt.excused, tt.twice)
			}
		})
	}
}

func TestCheckCounts(t *testing.T) {
	t0 := time.Unix(0, 0)
	recs := []Record{
		{ID: 1, Status: 503, RetryAfter: "1", Key: "a", Start: t0, End: t0},
		{ID: 1, Attempt: 1, Status: 200, Key: "a", Start: t0, End: t0},
		{ID: 2, Status: 0, Err: "reset", Start: t0, End: t0},
	}
	rep := Check(Input{Records: recs, Ran: []Ran{{Key: "h:a"}}, Hash: hash, Heals: []Heal{{Took: time.Second, OK: true}, {Took: 3 * time.Second, OK: true}}})
	if rep.Requests != 2 || rep.Attempts != 3 || rep.ByStatus[503] != 1 || rep.ByStatus[200] != 1 || rep.ByStatus[0] != 1 || rep.Unanswered != 1 || rep.WorstHeal != 3*time.Second {
		t.Fatalf("report %+v", rep)
	}
	if got := rep.Statuses(); len(got) != 3 || got[0] != 0 || got[2] != 503 {
		t.Fatalf("Statuses() = %v", got)
	}
}
