package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
)

// linRevoke is POST /api/cluster/revoke of board Name.
type linRevoke struct{ Name string }

// linRevokes is the history of the boards' revocations: once the
// nemesis is over and the cluster steady again (one master, every board
// running, each board's log naming a leader; waited for at most 30 s), a
// client at every board revokes boards drawn from all but the first, the
// log's leader among them (two answers each, at once with the others; after a 503 it waits its
// Retry-After and draws again, six tries at most), so the revocations race
// one another and the majority rule (docs/DESIGN.md: 409 when it would
// revoke a majority). They come last because a revoked board is out for
// good.
func linRevokes(t *testing.T, h *linHistory, boards []*board, seed uint64) {
	var why string
	start := time.Now()
	steady := pollUntil(context.Background(), 30*time.Second, func() bool {
		if m, _ := masterOf(boards); m == "" {
			_, why = agreed(boards, "?", 0)
			return false
		}
		for _, b := range boards {
			if linLogLeader(b) == "" {
				why = b.name + "'s log names no leader"
				return false
			}
		}
		return true
	})
	if steady {
		t.Logf("revocations: the cluster steady %v after the nemesis", time.Since(start).Round(time.Millisecond))
	} else {
		t.Errorf("revocations: the cluster not steady 30 s after the nemesis: %s", why)
	}
	// the log's leader too: a revoked leader is no longer followed
	// (node/durable/revoked.go; TestRevokeTheLogsLeader)
	leader := linLogLeader(boards[0])
	var targets []string
	for _, b := range boards[1:] {
		targets = append(targets, b.name)
	}
	t.Logf("revocations: of %v (the log's leader is %q)", targets, leader)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for c, entry := range boards {
		rng := rand.New(rand.NewPCG(seed, uint64(1000+c)))
		wg.Go(func() {
			for answered, try := 0, 0; answered < 2 && try < 6 && ctx.Err() == nil; try++ {
				name := targets[rng.IntN(len(targets))]
				call := h.now()
				out, err := linDo(ctx, entry, "POST", "/api/cluster/revoke", "", fmt.Sprintf(`{"name":%q}`, name))
				if err == nil && out.Code == http.StatusForbidden && !strings.Contains(out.Error, "majority") {
					out.Code = -1 // a refusal for another reason (the board itself revoked): unknown
				}
				got := known(out, err, http.StatusOK, http.StatusConflict, http.StatusForbidden)
				h.record("revoke", 1000+c, linRevoke{name}, call, got, entry.name)
				if !got.unknown() {
					answered++
				} else if err == nil && out.Code == http.StatusServiceUnavailable {
					hold(ctx, time.Second)
				}
			}
		})
	}
	wg.Wait()
}

// linLogLeader is the durable log's leader as b sees it; "" when none or
// b does not answer.
func linLogLeader(b *board) string {
	var st struct {
		Leader string `json:"leader"`
	}
	code, out, err := b.do("", "GET", "/api/cluster/raft", "")
	if err != nil || code != http.StatusOK || json.Unmarshal(out, &st) != nil {
		return ""
	}
	return st.Leader
}

// revokeModel is the revoked list of a cluster of n boards, which only
// grows: a revocation of a board on it answers 200 with the first entry's
// time; of a board not on it, 200 (and the board joins it, at the time
// answered) unless the list would then hold a majority of the boards, when
// it is refused: 409, or 403 when the log's guard refused it after the
// board's own check passed. The state is the list as "name@at;...",
// sorted; an unknown time ("?", a revocation whose answer was lost) takes
// the first time a later answer shows.
func revokeModel(n int) porcupine.Model {
	parse := func(s string) map[string]string {
		m := map[string]string{}
		for e := range strings.SplitSeq(s, ";") {
			if name, at, ok := strings.Cut(e, "@"); ok {
				m[name] = at
			}
		}
		return m
	}
	format := func(m map[string]string) string {
		var es []string
		for name, at := range m {
			es = append(es, name+"@"+at)
		}
		slices.Sort(es)
		return strings.Join(es, ";")
	}
	return porcupine.Model{
		Init: func() any { return "" },
		Step: func(state, input, output any) (bool, any) {
			list, in, out := parse(state.(string)), input.(linRevoke), output.(linOut)
			at, on := list[in.Name]
			refused := !on && len(list)+1 >= n/2+1 && n > 1
			switch {
			case on && out.unknown():
				return true, state
			case on:
				if at == "?" && out.Code == http.StatusOK {
					list[in.Name] = out.At
					return true, format(list)
				}
				return out.Code == http.StatusOK && out.At == at, state
			case refused:
				return out.unknown() || out.Code == http.StatusConflict || out.Code == http.StatusForbidden, state
			case out.unknown():
				list[in.Name] = "?"
				return true, format(list)
			default:
				list[in.Name] = out.At
				return out.Code == http.StatusOK, format(list)
			}
		},
		DescribeOperation: func(input, output any) string {
			in, out := input.(linRevoke), output.(linOut)
			if out.Code == http.StatusOK {
				return fmt.Sprintf("revoke %s -> 200 at %s", in.Name, out.At)
			}
			return fmt.Sprintf("revoke %s -> %s", in.Name, codeText(out))
		},
		DescribeState: func(state any) string { return "[" + state.(string) + "]" },
	}
}
