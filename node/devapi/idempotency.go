package devapi

import (
	"container/list"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/ews-firmware/ews/internal/httpx"
)

// idempotency remembers the answer given for each Idempotency-Key, so a
// retried action runs once. At most cap keys are kept (least recently used
// go first), each for ttl. Duplicates that arrive while the first is still
// running wait for its answer.
type idempotency struct {
	mu  sync.Mutex
	m   map[string]*entry
	lru *list.List // of *entry, most recently used first
	cap int
	ttl time.Duration
	now func() time.Time
}

type entry struct {
	key, fp string
	board   string // non-empty: a remote claim, the board that ran it (key is then remoteKey(KeyHash))
	at      time.Time
	elem    *list.Element
	done    chan struct{} // closed when status and body are set
	status  int
	body    []byte
}

func newIdempotency(cap int, ttl time.Duration, now func() time.Time) *idempotency {
	return &idempotency{m: map[string]*entry{}, lru: list.New(), cap: cap, ttl: ttl, now: now}
}

// begin returns the entry for key; owner is true when the caller must run the
// action and call finish. A key reused for another request is an error.
func (c *idempotency) begin(key, fp string) (e *entry, owner bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if e, ok := c.m[key]; ok {
		if now.Sub(e.at) < c.ttl {
			if e.fp != fp {
				return nil, false, fmt.Errorf("Idempotency-Key %q was used for %s", shown(key), e.fp)
			}
			c.lru.MoveToFront(e.elem)
			return e, false, nil
		}
		c.removeLocked(e)
	}
	if r, ok := c.m[remoteKey(KeyHash(key))]; ok && now.Sub(r.at) < c.ttl {
		if r.fp != fp {
			return nil, false, fmt.Errorf("Idempotency-Key %q was used for %s on board %s", shown(key), r.fp, r.board)
		}
		return nil, false, &ranElsewhere{board: r.board}
	}
	e = &entry{key: key, fp: fp, at: now, done: make(chan struct{})}
	e.elem = c.lru.PushFront(e)
	c.m[key] = e
	for c.lru.Len() > c.cap {
		c.removeLocked(c.lru.Back().Value.(*entry))
	}
	return e, true, nil
}

// remember records that board ran a request with the key of hash keyHash
// and fingerprint fp; a local entry for the same key wins (it holds the
// answer).
func (c *idempotency) remember(keyHash, fp, board string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := remoteKey(keyHash)
	if e, ok := c.m[k]; ok {
		c.removeLocked(e)
	}
	e := &entry{key: k, fp: fp, board: board, at: c.now()}
	e.elem = c.lru.PushFront(e)
	c.m[k] = e
	for c.lru.Len() > c.cap {
		c.removeLocked(c.lru.Back().Value.(*entry))
	}
}

// ranElsewhere is the answer to a key another board already ran the same
// request with: running it here would run it twice.
type ranElsewhere struct{ board string }

func (e *ranElsewhere) Error() string {
	return fmt.Sprintf("this request already ran on board %s with this Idempotency-Key; its answer is kept there", e.board)
}

// shown is a kept key as its client sent it (without its principal).
func shown(key string) string {
	if i := strings.LastIndexByte(key, '\x01'); i >= 0 {
		return key[i+1:]
	}
	return key
}

// remoteKey is where a remote claim is kept: a NUL cannot be in a header
// value, so no client key collides with it.
func remoteKey(keyHash string) string { return "\x00" + keyHash }

// KeyHash is how a key travels between boards: a digest, so the keys of
// clients are not broadcast as they are.
func KeyHash(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:16])
}

// finish records the answer and wakes the duplicates waiting for it.
func (c *idempotency) finish(e *entry, status int, body []byte) {
	c.mu.Lock()
	e.status, e.body = status, body
	c.mu.Unlock()
	close(e.done)
}

func (c *idempotency) removeLocked(e *entry) {
	if c.m[e.key] == e {
		delete(c.m, e.key)
	}
	c.lru.Remove(e.elem)
}

// Len returns how many keys are kept.
func (c *idempotency) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// fingerprint names what a key was first used for: method, path, query and
// a digest of the body, so the same key with another body is refused (422)
// instead of replaying an answer to a different request. The body is the
// one the front door read (httpx.Body); a request that did not pass it
// (a test's handler call) has its body read once here, the same way.
func fingerprint(r *http.Request) (string, error) {
	fp := r.Method + " " + r.URL.Path + "?" + r.URL.RawQuery
	body, ok := httpx.Body(r)
	if !ok && r.Body != nil && r.Body != http.NoBody {
		var err error
		if body, err = httpx.ReadBody(r, maxUnreadBody); err != nil {
			return "", err
		}
		*r = *httpx.WithBody(r, body)
	}
	if len(body) == 0 {
		return fp, nil
	}
	sum := sha256.Sum256(body)
	return fp + " body sha256:" + hex.EncodeToString(sum[:8]), nil
}

// maxUnreadBody caps a body no front door read (the front door's own cap,
// [http] max_body, applies to every request on a board).
const maxUnreadBody = 1 << 20
