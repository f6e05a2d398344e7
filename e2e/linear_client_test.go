package e2e

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// linUsers are the users the clients make and delete: few, so clients
// meet on them.
var linUsers = []string{"h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7"}

// linClient is one client of TestLinearizable: it enters the cluster at
// its board (a follower for most), draws its operations from its own
// seeded source, and records each with its call, return and answer.
type linClient struct {
	id     int
	entry  *board
	boards []*board
	h      *linHistory
	rng    *rand.Rand
}

// run sends operations one after the other until ctx ends or maxOps.
func (c *linClient) run(ctx context.Context, maxOps int) {
	for i := 0; i < maxOps && ctx.Err() == nil; i++ {
		switch p := c.rng.IntN(10); {
		case p < 4:
			c.user(ctx)
		case p < 6:
			c.config(ctx, i)
		default:
			c.relay(ctx)
		}
	}
}

// known keeps an answer whose status the model reads; any other outcome
// (an error, a timeout, 503, 500...) is unknown.
func known(out linOut, err error, codes ...int) linOut {
	if err != nil {
		return linOut{Error: err.Error()}
	}
	for _, c := range codes {
		if out.Code == c {
			return out
		}
	}
	return linOut{Error: fmt.Sprintf("%d %s", out.Code, out.Error)}
}

// send runs one operation of model and records it, unless its board
// refused the connection (the request ran nowhere: nothing to record). A
// 503 is answered as a client does: it waits the answer's Retry-After
// (at most a second) before its next operation.
func (c *linClient) send(ctx context.Context, model string, in any, meta string, codes []int, op func() (linOut, error)) {
	call := c.h.now()
	out, err := op()
	if errors.Is(err, syscall.ECONNREFUSED) {
		c.h.refused()
		hold(ctx, 200*time.Millisecond) // the board is down: a client's pause before it tries again
		return
	}
	c.h.record(model, c.id, in, call, known(out, err, codes...), meta)
	if err == nil && out.Code == http.StatusServiceUnavailable {
		hold(ctx, time.Second)
	}
}

func (c *linClient) user(ctx context.Context) {
	name := linUsers[c.rng.IntN(len(linUsers))]
	switch c.rng.IntN(5) {
	case 0, 1:
		c.send(ctx, "users", linUser{"create", name}, c.entry.name, []int{http.StatusCreated, http.StatusConflict}, func() (linOut, error) {
			return linDo(ctx, c.entry, "POST", "/api/users", "", fmt.Sprintf(`{"name":%q,"role":"viewer"}`, name))
		})
	case 2, 3:
		c.send(ctx, "users", linUser{"delete", name}, c.entry.name, []int{http.StatusOK, http.StatusNotFound}, func() (linOut, error) {
			return linDo(ctx, c.entry, "DELETE", "/api/users/"+name, "", "")
		})
	default:
		c.send(ctx, "users", linUser{"rotate", name}, c.entry.name, []int{http.StatusOK, http.StatusNotFound}, func() (linOut, error) {
			return linDo(ctx, c.entry, "POST", "/api/users/"+name+"/rotate", "", "")
		})
	}
}

// linMark is the line each PUT adds to the document, so every version
// differs from the one before; the previous mark is taken out.
var linMark = regexp.MustCompile(`(?m)^# lin .*\n`)

// config reads the configuration from any board (its copy: not an
// operation of the model) and PUTs it back through its own board with
// If-Match of the version it read.
func (c *linClient) config(ctx context.Context, i int) {
	from := c.boards[c.rng.IntN(len(c.boards))]
	v, text, err := linGetConfig(ctx, from)
	if err != nil {
		return
	}
	text = linMark.ReplaceAllString(text, "")
	if !strings.HasSuffix(text, "\n") && text != "" {
		text += "\n"
	}
	text += fmt.Sprintf("# lin c%d-%d\n", c.id, i)
	meta := fmt.Sprintf("%s (read on %s)", c.entry.name, from.name)
	c.send(ctx, "config", linConfig{v}, meta, []int{http.StatusOK, http.StatusPreconditionFailed}, func() (linOut, error) {
		return linDo(ctx, c.entry, "PUT", "/api/config", fmt.Sprintf(`"%d"`, v), text)
	})
}

func (c *linClient) relay(ctx context.Context) {
	op := []string{"turn_on", "turn_off", "toggle", "read", "read"}[c.rng.IntN(5)]
	c.send(ctx, "relay", linRelay{op}, c.entry.name, []int{http.StatusOK}, func() (linOut, error) {
		return linDo(ctx, c.entry, "POST", "/api/devices/relay1/"+op, "", "")
	})
}
