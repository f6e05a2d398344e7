package chaos

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Window is a time a fault was on a board. With Excuse (the board was
// down, paused or cut off) an attempt sent to it then may go unanswered
// without blame (the client retries elsewhere); every window names the
// faults that were on while an answer was lost.
type Window struct {
	Board    string
	Kind     Kind
	From, To time.Time
	Excuse   bool
}

// Heal is what the harness saw after healing one fault: how long until
// every board saw one and the same master (zero OK: never, within the wait).
type Heal struct {
	Kind Kind
	Took time.Duration
	OK   bool
}

// Input is everything the checker reads.
type Input struct {
	Records   []Record
	Ran       []Ran
	Windows   []Window
	Heals     []Heal
	HealBound time.Duration           // the longest allowed Heal.Took
	Hash      func(key string) string // Record.Key to Ran.Key (devapi.KeyHash)
	// Tolerate lists faults whose lost answers on their own board are a
	// known, recorded defect: counted in Report.Tolerated, not violations.
	Tolerate map[Kind]bool
}

// Report is the checker's verdict with the run's figures.
type Report struct {
	Requests   int          // distinct client requests
	Attempts   int          // sends, retries included
	ByStatus   map[int]int  // attempts by status; 0: no answer
	Lost       int          // attempts without an answer from a board that was up (goal 0)
	LostDuring map[Kind]int // lost attempts by the faults on while they ran ("" none)
	Excused    int          // attempts without an answer from a board under a fault
	Tolerated  int          // lost on a board under a fault of Input.Tolerate (in Lost too)
	RanTwice   int          // keys whose action ran more than once (goal 0)
	Unanswered int          // requests that got no answer at all, retries included
	WorstHeal  time.Duration
	Violations []string
}

// OK reports whether no invariant was broken.
func (r Report) OK() bool { return len(r.Violations) == 0 }

// maxViolations bounds the list; the counts stay exact.
const maxViolations = 50

func (r *Report) violate(format string, args ...any) {
	if len(r.Violations) < maxViolations {
		r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
	} else if len(r.Violations) == maxViolations {
		r.Violations = append(r.Violations, "chaos: more violations left out")
	}
}

// Check asserts the harness's invariants:
//   - every attempt got exactly one answer, unless its board was under a
//     fault while it ran (Excused);
//   - every answer is 2xx; 4xx only for the client's own mistake (or 409
//     for a retry of a keyed request that ran on another board); 503 only
//     with Retry-After; 502 only for a request without an Idempotency-Key;
//   - no keyed action ran more than once on the boards, and a keyed action
//     answered 2xx or 409 ran once;
//   - after every heal one master within HealBound.
func Check(in Input) Report {
	rep := Report{ByStatus: map[int]int{}, LostDuring: map[Kind]int{}}
	type attempt struct{ id, n int }
	seen := map[attempt]bool{}
	answered := map[int]bool{}
	ids := map[int]Record{}
	for _, rec := range in.Records {
		rep.Attempts++
		rep.ByStatus[rec.Status]++
		if _, ok := ids[rec.ID]; !ok {
			ids[rec.ID] = rec
			rep.Requests++
		}
		a := attempt{rec.ID, rec.Attempt}
		if seen[a] {
			rep.violate("request %d attempt %d: logged twice (two answers)", rec.ID, rec.Attempt)
		}
		seen[a] = true
		if rec.Status == 0 {
			if excused(in.Windows, rec) {
				rep.Excused++
			} else {
				rep.Lost++
				during := faultsDuring(in.Windows, rec)
				if tolerated(in.Tolerate, during, rec) {
					rep.Tolerated++
					for _, w := range during {
						rep.LostDuring[w.Kind]++
					}
					continue
				}
				if len(during) == 0 {
					rep.LostDuring[""]++
				}
				for _, w := range during {
					rep.LostDuring[w.Kind]++
				}
				rep.violate("request %d attempt %d to %s: no answer after %v (%s)%s", rec.ID, rec.Attempt, rec.Board, rec.End.Sub(rec.Start).Round(time.Millisecond), rec.Err, describe(during))
			}
			continue
		}
		answered[rec.ID] = true
		if msg := badStatus(rec, in.Windows); msg != "" {
			rep.violate("request %d attempt %d to %s: %s", rec.ID, rec.Attempt, rec.Board, msg)
		}
	}
	for id := range ids {
		if !answered[id] {
			rep.Unanswered++
		}
	}
	ran := map[string]int{}
	for _, r := range in.Ran {
		if r.Key != "" {
			ran[r.Key]++
		}
	}
	for key, n := range ran {
		if n > 1 {
			rep.RanTwice++
			rep.violate("key digest %s: the action ran %d times", key, n)
		}
	}
	if in.Hash != nil {
		done := map[string]bool{}
		for _, rec := range in.Records {
			if rec.Key == "" || rec.Mistake || done[rec.Key] {
				continue
			}
			if rec.Status/100 == 2 || rec.Status == http.StatusConflict {
				done[rec.Key] = true
				if ran[in.Hash(rec.Key)] == 0 {
					rep.violate("request %d: answered %d but no board ran its action", rec.ID, rec.Status)
				}
			}
		}
	}
	for _, h := range in.Heals {
		switch {
		case !h.OK:
			rep.violate("after healing %s: no single master agreed by every board", h.Kind)
		case in.HealBound > 0 && h.Took > in.HealBound:
			rep.violate("after healing %s: one master took %v, over the bound %v", h.Kind, h.Took, in.HealBound)
		}
		rep.WorstHeal = max(rep.WorstHeal, h.Took)
	}
	return rep
}

// badStatus says what is wrong with an answer's status, "" if nothing. A
// 408 (the board's listener did not get the request header in time: nothing
// ran, the client sends it again) is right only while the board's own link
// was slowed.
func badStatus(rec Record, ws []Window) string {
	s := rec.Status
	switch {
	case s/100 == 2:
		return ""
	case s == http.StatusRequestTimeout:
		for _, w := range faultsDuring(ws, rec) {
			if w.Kind == SlowLink && w.Board == rec.Board {
				return ""
			}
		}
		return "408 while the board's link was not slowed"
	case s == http.StatusConflict && rec.Key != "" && rec.Attempt > 0:
		return "" // the retry of a request that ran on another board
	case s/100 == 4:
		if rec.Mistake {
			return ""
		}
		return fmt.Sprintf("%d for a well-formed request", s)
	case s == http.StatusServiceUnavailable:
		if rec.RetryAfter == "" {
			return "503 without Retry-After"
		}
		return ""
	case s == http.StatusBadGateway:
		if rec.Key != "" {
			return "502 for a request with an Idempotency-Key (want 503 + Retry-After)"
		}
		return ""
	}
	return fmt.Sprintf("status %d", s)
}

// excused reports whether rec's board was down, paused or cut off while it ran.
func excused(ws []Window, rec Record) bool {
	for _, w := range ws {
		if w.Excuse && w.Board == rec.Board && w.From.Before(rec.End) && rec.Start.Before(w.To) {
			return true
		}
	}
	return false
}

// tolerated reports whether one of the faults on rec's own board is tolerated.
func tolerated(tol map[Kind]bool, during []Window, rec Record) bool {
	for _, w := range during {
		if w.Board == rec.Board && tol[w.Kind] {
			return true
		}
	}
	return false
}

// faultsDuring lists the windows that overlap rec, on any board.
func faultsDuring(ws []Window, rec Record) []Window {
	var out []Window
	for _, w := range ws {
		if w.From.Before(rec.End) && rec.Start.Before(w.To) {
			out = append(out, w)
		}
	}
	return out
}

func describe(ws []Window) string {
	if len(ws) == 0 {
		return ", no fault on"
	}
	var parts []string
	for _, w := range ws {
		parts = append(parts, fmt.Sprintf("%s of %s", w.Kind, w.Board))
	}
	return ", during " + strings.Join(parts, ", ")
}

// Statuses lists the statuses of a report's ByStatus in order.
func (r Report) Statuses() []int {
	out := make([]int, 0, len(r.ByStatus))
	for s := range r.ByStatus {
		out = append(out, s)
	}
	sort.Ints(out)
	return out
}
