package e2e

// The upgrade path of issue 23 ("Upgrading into this"): a cluster running
// the last landed version (lastLanded) reaches this one by the rolling
// upgrade under load, losing no request and refusing nothing it accepted
// before:
//
//	go test -race -run TestRollingUpgradeFromLastLanded -v ./e2e/

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ews-firmware/ews/internal/bundle"
	"github.com/ews-firmware/ews/internal/testutil"
)

// newVersion stamps the build under test, so every board's /api/board
// shows which binary it runs.
const newVersion = "upgrade-target"

// upCluster is three boards set up as a user sets up a TLS cluster: an
// admin bundle from `ews cluster init`, each board's own bundle from `ews
// cluster board`, a config naming only bundle_file, the CA from `ews
// cluster ca` on the client.
type upCluster struct {
	boards []*tlsBoard
	admin  string // the admin bundle (never on a board)
	caFile string
	token  string
	client *http.Client // trusts the cluster CA
}

// startUpCluster starts three boards, each on its own copy of bin (an
// upgrade replaces it), with bin's own CLI making the bundles.
func startUpCluster(t *testing.T, bin string) *upCluster {
	t.Helper()
	dir := t.TempDir()
	plain, peers := layout(t, 3)
	c := &upCluster{admin: filepath.Join(dir, "admin.bundle"), caFile: filepath.Join(dir, "ca.pem")}
	run := func(args ...string) []byte {
		t.Helper()
		out, err := exec.Command(bin, args...).Output()
		if err != nil {
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				out = append(out, ee.Stderr...)
			}
			t.Fatalf("ews %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	run("cluster", "init", "--peers", strings.ReplaceAll(strings.ReplaceAll(peers, `"`, ""), " ", ""), "--out", c.admin)
	writeFile(t, c.caFile, string(run("cluster", "ca", c.admin)))
	admin, err := bundle.Read(c.admin) // the token `ews cluster init` showed
	if err != nil {
		t.Fatal(err)
	}
	c.token = admin.Token
	c.client = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509Pool(t, []byte(readFile(t, c.caFile)))}}}
	t.Cleanup(c.client.CloseIdleConnections)
	var devices strings.Builder
	for _, b := range plain {
		fmt.Fprintf(&devices, "[[device]]\nname = \"relay%[1]s\"\ndriver = \"sim-switch\"\nnode = %[2]q\n[[device]]\nname = \"temp%[1]s\"\ndriver = \"sim-sensor\"\nnode = %[2]q\n",
			strings.TrimPrefix(b.name, "ews"), b.name)
	}
	for _, b := range plain {
		port, _ := strconv.Atoi(b.http[strings.LastIndex(b.http, ":")+1:])
		tb := &tlsBoard{board: b, https: fmt.Sprintf("127.0.0.1:%d", port+200)}
		bb := filepath.Join(dir, b.name+".bundle")
		run("cluster", "board", b.name, "--addr", "127.0.0.1", "--bundle", c.admin, "--out", bb)
		b.cfg = filepath.Join(dir, b.name+".toml")
		writeFile(t, b.cfg, fmt.Sprintf(`[node]
name = %q
http = %q
gossip = %q
capacity = 2
[cluster]
peers = [%s]
bundle_file = %q
%s[http]
auth = "token"
https = %q
[sim]
device_latency = "5ms"
page_latency = "0s"
%s`, b.name, b.http, b.gossip, peers, bb, fastTimers, tb.https, devices.String()))
		exe := filepath.Join(dir, b.name, "ews")
		copyBinary(t, bin, exe)
		b.flags = []string{"--log-level", "debug"} // refused gossip is logged at debug
		b.startWith(t, nil, exe)
		c.boards = append(c.boards, tb)
	}
	return c
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// get reads path of board b over HTTPS with the token into v.
func (c *upCluster) get(b *tlsBoard, path string, v any) error {
	req, err := http.NewRequest(http.MethodGet, "https://"+b.https+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	client := &http.Client{Timeout: time.Second, Transport: c.client.Transport}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s%s: %s", b.name, path, resp.Status)
	}
	if s, ok := v.(*string); ok {
		body, err := io.ReadAll(resp.Body)
		*s = string(body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// agreed reports whether every board sees one master, with every board running.
func (c *upCluster) agreed() (string, bool, string) {
	master := ""
	for _, b := range c.boards {
		var v clusterView
		if err := c.get(b, "/api/cluster", &v); err != nil {
			return "", false, err.Error()
		}
		rs := v.runstates()
		if v.Master == "" || (master != "" && v.Master != master) {
			return "", false, fmt.Sprintf("%s sees master %q, runstates %v", b.name, v.Master, rs)
		}
		master = v.Master
		for _, o := range c.boards {
			if rs[o.name] != "running" {
				return "", false, fmt.Sprintf("%s sees %s %q", b.name, o.name, rs[o.name])
			}
		}
	}
	return master, true, ""
}

// TestRollingUpgradeFromLastLanded is issue 23's "Upgrading into this":
// three boards on the last landed binary, a TLS cluster set up as the
// README says, upgraded one by one to this tree's build under steady load,
// both ways the product offers: `ews upgrade` (this tree's CLI, the one
// that signed the build) and the UI's rolling upgrade (POST
// /api/cluster/upgrade to a follower, which runs the old code and
// coordinates). Each way: no request lost, no 401/403 and no refused mark,
// credentials or gossip between old and new boards, one master throughout,
// and every board on the new version at the end.
func TestRollingUpgradeFromLastLanded(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the last landed ews and runs three boards through a rolling upgrade")
	}
	old, next := lastLandedBinary(t), versionBinary(t, newVersion)
	ways := []struct {
		name    string
		upgrade func(t *testing.T, c *upCluster, signed, token string)
	}{
		{"ews upgrade", upgradeByCLI},
		{"the UI: POST /api/cluster/upgrade to a follower", upgradeByBoard},
	}
	for _, w := range ways {
		t.Run(w.name, func(t *testing.T) { upgradeUnderLoad(t, old, next, w.upgrade) })
	}
}

// upgradeByCLI runs `ews upgrade` against a follower, as the README shows.
func upgradeByCLI(t *testing.T, c *upCluster, signed, token string) {
	var out, errOut bytes.Buffer
	cli := exec.Command(ewsBinary(t), "upgrade", "--url", "https://"+c.boards[1].https, "--binary", signed, "--token-file", token, "--cacert", c.caFile)
	cli.Stdout, cli.Stderr = &out, &errOut
	err := cli.Run()
	t.Logf("ews upgrade:\n%s%s", out.String(), errOut.String())
	if err != nil {
		t.Errorf("ews upgrade: %v", err)
	}
	if order := regexpOrder(out.String()); order != "ews3,ews2,ews1" {
		t.Errorf("upgrade order %q, want the followers first and the master last (ews3,ews2,ews1)", order)
	}
}

// upgradeByBoard uploads the build to follower ews2 (the UI's rolling
// upgrade): ews2, on the old code, upgrades ews3, then the master ews1,
// then itself; done when every board runs the build.
func upgradeByBoard(t *testing.T, c *upCluster, signed, _ string) {
	body, err := os.ReadFile(signed)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, "https://"+c.boards[1].https+"/api/cluster/upgrade", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("X-Firmware-Sha256", fileSHA(t, signed))
	resp, err := (&http.Client{Timeout: time.Minute, Transport: c.client.Transport}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || !strings.Contains(string(msg), `"order":["ews3","ews1","ews2"]`) {
		t.Fatalf("POST /api/cluster/upgrade on ews2: %d %s, want 202 with the order ews3, ews1 (master), ews2 (itself) last", resp.StatusCode, msg)
	}
	sum := fileSHA(t, signed)
	testutil.WaitFor(t, "every board on the build, running", 2*time.Minute, func() (bool, string) {
		for _, b := range c.boards {
			var info boardJSON
			if err := c.get(b, "/api/board", &info); err != nil || info.SHA256 != sum || info.Runstate != "running" {
				var st string
				_ = c.get(c.boards[1], "/api/cluster/upgrade", &st)
				return false, fmt.Sprintf("%s: %s %s %v; ews2's rollout: %s", b.name, info.Version, info.Runstate, err, st)
			}
		}
		return true, ""
	})
	var st struct {
		Done  []struct{ Board, Msg string }
		Error string
	}
	if err := c.get(c.boards[1], "/api/cluster/upgrade", &st); err != nil || st.Error != "" || len(st.Done) != 3 {
		t.Errorf("ews2's rollout status after it: %+v %v, want 3 steps and no error", st, err)
	}
	t.Logf("ews2's rolling upgrade: %+v", st.Done)
}

// upgradeUnderLoad starts three boards on old, puts them under load and
// upgrades them to next (signed with the old admin bundle) by upgrade.
func upgradeUnderLoad(t *testing.T, old, next string, upgrade func(t *testing.T, c *upCluster, signed, token string)) {
	c := startUpCluster(t, old)
	testutil.WaitFor(t, "three old boards agree on a master, over HTTPS", 30*time.Second, func() (bool, string) {
		_, ok, seen := c.agreed()
		return ok, seen
	})
	for _, b := range c.boards {
		var info boardJSON
		if err := c.get(b, "/api/board", &info); err != nil || info.Version != lastLanded[:7] {
			t.Fatalf("%s before the upgrade: %+v %v, want version %s", b.name, info, err, lastLanded[:7])
		}
	}
	// The new build, signed as `make dist SIGN=ADMIN` signs it: with this
	// tree's CLI and the admin bundle the old version made.
	signed := filepath.Join(t.TempDir(), "ews-new")
	copyBinary(t, next, signed)
	if out, err := exec.Command(ewsBinary(t), "firmware", "sign", "--bundle", c.admin, signed).CombinedOutput(); err != nil {
		t.Fatalf("ews firmware sign --bundle ADMIN (the old admin bundle): %v\n%s", err, out)
	}
	tok := filepath.Join(t.TempDir(), "token")
	writeFile(t, tok, c.token+"\n")

	mon := watchUpgrade(c)
	load := startUpgradeLoad(c)
	load.waitAnswers(t, 30) // the load runs before the first board goes
	upStart := time.Now()
	upgrade(t, c, signed, tok)
	upEnd := time.Now()
	load.waitAnswers(t, load.count()+30) // and after the last board is back
	load.stop()
	mon.stop()
	t.Logf("upgrade took %v", upEnd.Sub(upStart).Round(time.Millisecond))

	t.Run("every board runs the new version", func(t *testing.T) {
		sum := fileSHA(t, signed)
		for _, b := range c.boards {
			var info boardJSON
			if err := c.get(b, "/api/board", &info); err != nil || info.Version != newVersion || info.SHA256 != sum || info.Runstate != "running" {
				t.Errorf("%s after the upgrade: %+v %v, want version %s, sha256 %s, running", b.name, info, err, newVersion, sum)
			}
		}
		testutil.WaitFor(t, "the upgraded boards agree on a master", 10*time.Second, func() (bool, string) {
			_, ok, seen := c.agreed()
			return ok, seen
		})
	})
	t.Run("no request lost or refused", func(t *testing.T) { load.check(t, upStart, upEnd) })
	t.Run("one master throughout", func(t *testing.T) { mon.check(t) })
	t.Run("no refusal between old and new boards", func(t *testing.T) {
		mon.checkRefusals(t)
		for _, b := range c.boards {
			seen := map[string]int{} // a refusal without its time -> how often
			var order []string
			for _, l := range strings.Split(b.log.String(), "\n") {
				if !refusalLine(l) {
					continue
				}
				if _, rest, ok := strings.Cut(l, " "); ok && strings.HasPrefix(l, "time=") {
					l = rest
				}
				if seen[l]++; seen[l] == 1 {
					order = append(order, l)
				}
			}
			for _, l := range order {
				t.Errorf("%s logged a refusal %d times: %s", b.name, seen[l], l)
			}
		}
	})
}

// refusalLine reports whether a board's log line says it refused another
// board or what another board sent (credentials, gossip, a member).
// Gossip from a board that has not joined yet (it is restarting) is
// refused for that reason alone, and joins a moment later: not counted.
func refusalLine(l string) bool {
	if strings.Contains(l, `msg="message refused"`) {
		return !strings.Contains(l, "which is not a member (not joined yet")
	}
	for _, s := range []string{"gossip message refused", "refused credentials", "gossip refused", "board refused", "its messages are refused until", ": refused"} {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// upgradeWatch polls every board's table and refusal counters while the
// upgrade runs.
type upgradeWatch struct {
	c    *upCluster
	done chan struct{}
	wg   sync.WaitGroup

	mu       sync.Mutex
	rounds   int
	epochs   map[uint64]string // epoch -> the master seen at it
	clashes  []string          // an epoch seen with two masters
	splits   []string          // boards naming different masters for longer than splitLimit
	history  []string          // each new (epoch, master) as first seen
	refusals map[string]string // board+series -> the first nonzero sample
}

// splitLimit is how long boards that answer may name different masters:
// a table takes a heartbeat or two to spread, and a takeover waits tmax
// (1 s); boards that refuse each other's gossip disagree for as long as
// the mixed cluster runs.
const splitLimit = 3 * time.Second

func watchUpgrade(c *upCluster) *upgradeWatch {
	w := &upgradeWatch{c: c, done: make(chan struct{}), epochs: map[uint64]string{}, refusals: map[string]string{}}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		var splitSince time.Time // when the boards that answer began naming different masters
		reported := false
		deadline := time.Now().Add(3 * time.Minute) // bounded even if stop is never called
		for i := 0; time.Now().Before(deadline); i++ {
			select {
			case <-w.done:
				return
			case <-time.After(100 * time.Millisecond):
			}
			masters := map[string][]string{}
			for _, b := range c.boards {
				var v clusterView
				if c.get(b, "/api/cluster", &v) != nil || v.Master == "" {
					continue // restarting, or listening for a master
				}
				masters[v.Master] = append(masters[v.Master], b.name)
				w.saw(b.name, v)
			}
			w.mu.Lock()
			w.rounds++
			switch {
			case len(masters) <= 1:
				splitSince, reported = time.Time{}, false
			case splitSince.IsZero():
				splitSince = time.Now()
			case !reported && time.Since(splitSince) > splitLimit: // once per split
				reported = true
				w.splits = append(w.splits, fmt.Sprintf("boards name different masters for more than %v from %s: %v", splitLimit, splitSince.Format("15:04:05.000"), masters))
			}
			w.mu.Unlock()
			if i%4 == 0 {
				for _, b := range c.boards {
					var m string
					if c.get(b, "/metrics", &m) == nil {
						w.sawMetrics(b.name, m)
					}
				}
			}
		}
	}()
	return w
}

func (w *upgradeWatch) saw(board string, v clusterView) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m, ok := w.epochs[v.Epoch]
	switch {
	case !ok:
		w.epochs[v.Epoch] = v.Master
		w.history = append(w.history, fmt.Sprintf("epoch %d: %s (first seen by %s)", v.Epoch, v.Master, board))
	case m != v.Master:
		c := fmt.Sprintf("%s sees master %s at epoch %d, another board saw %s", board, v.Master, v.Epoch, m)
		if !slices.Contains(w.clashes, c) {
			w.clashes = append(w.clashes, c)
		}
	}
}

// badRefusals are the counters that say a board refused what another
// board of the cluster sent: a mark (403), credentials (401 turned 502),
// gossip it cannot decrypt, a member, a peer list. Not counted: stale-epoch
// and expired marks (503, sent again by the client) and gossip refused
// for its content (an election conflict, a packet before its sender joined).
var badRefusals = []string{
	`ews_dispatch_auth_refused_total`,
	`ews_dispatch_marks_refused_total{reason="malformed"}`, `ews_dispatch_marks_refused_total{reason="signature"}`,
	`ews_dispatch_marks_refused_total{reason="target"}`, `ews_dispatch_marks_refused_total{reason="path"}`,
	`ews_dispatch_marks_refused_total{reason="kind"}`, `ews_dispatch_marks_refused_total{reason="replayed"}`,
	`ews_dispatch_marks_refused_total{reason="client"}`, `ews_dispatch_marks_refused_total{reason="query"}`,
	`ews_dispatch_marks_refused_total{reason="not-a-peer"}`,
	`ews_cluster_messages_refused_total{type="encrypted"}`, `ews_cluster_messages_refused_total{type="unknown"}`,
	`ews_cluster_messages_refused_total{type="peers"}`, `ews_cluster_messages_refused_total{type="member"}`,
}

func (w *upgradeWatch) sawMetrics(board, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, l := range strings.Split(text, "\n") {
		for _, s := range badRefusals {
			match := strings.HasPrefix(l, s+" ")
			if !strings.Contains(s, "{") { // every label of the series
				match = match || strings.HasPrefix(l, s+"{")
			}
			if !match {
				continue
			}
			f := strings.Fields(l)
			if v, err := strconv.ParseFloat(f[len(f)-1], 64); err == nil && v > 0 {
				if _, ok := w.refusals[board+" "+f[0]]; !ok {
					w.refusals[board+" "+f[0]] = l
				}
			}
		}
	}
}

func (w *upgradeWatch) stop() {
	close(w.done)
	w.wg.Wait()
	// a last sample of the counters, after the last board is back
	for _, b := range w.c.boards {
		var m string
		if w.c.get(b, "/metrics", &m) == nil {
			w.sawMetrics(b.name, m)
		}
	}
}

func (w *upgradeWatch) check(t *testing.T) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t.Logf("%d rounds of every board's table; masters by epoch: %s", w.rounds, strings.Join(w.history, "; "))
	if w.rounds < 10 {
		t.Fatalf("only %d rounds of the boards' tables: the watch saw too little", w.rounds)
	}
	for _, s := range append(w.clashes, w.splits...) {
		t.Error(s)
	}
}

func (w *upgradeWatch) checkRefusals(t *testing.T) {
	w.mu.Lock()
	defer w.mu.Unlock()
	keys := make([]string, 0, len(w.refusals))
	for k := range w.refusals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Errorf("%s: %s", strings.Fields(k)[0], w.refusals[k])
	}
}

// upLoad is steady, bounded load through the master and both followers,
// authenticated, as a client following the README would send it: each
// device action carries an Idempotency-Key, a 503 with Retry-After is sent
// again after it, and a board that refuses the connection (it is
// restarting; nothing was accepted) is left for the next board.
type upLoad struct {
	done chan struct{}
	wg   sync.WaitGroup

	mu      sync.Mutex
	answers []upAnswer
	notes   map[string]int // answers other than 2xx, final or not, by text
}

// upAnswer is the final answer to one request.
type upAnswer struct {
	what     string // "worker seq: METHOD path via entry"
	status   int    // 0: no answer
	err      string
	retried  int // 503 + Retry-After answers before this one
	otherBd  int // boards that refused the connection before this one answered
	start    time.Time
	answered time.Time
}

const (
	loadWorkers   = 6                     // two per entry board: one waits out a Retry-After, the other goes on
	loadPerWorker = 1000                  // requests at most
	loadPace      = 40 * time.Millisecond // between one worker's requests: ~120 requests/s in all at most
	loadPerReq    = 30 * time.Second      // one request's retries end here
)

func startUpgradeLoad(c *upCluster) *upLoad {
	l := &upLoad{done: make(chan struct{}), notes: map[string]int{}}
	for w := range loadWorkers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			client := &http.Client{Timeout: 10 * time.Second, Transport: c.client.Transport.(*http.Transport).Clone()}
			defer client.CloseIdleConnections()
			for seq := range loadPerWorker {
				select {
				case <-l.done:
					return
				default:
				}
				k := strconv.Itoa(seq/3%3 + 1) // each kind of request to each board's device
				method, path := http.MethodPost, "/api/devices/relay"+k+"/toggle"
				switch seq % 3 {
				case 1:
					method, path = http.MethodGet, "/api/devices/relay"+k
				case 2:
					path = "/api/devices/temp" + k + "/read"
				}
				a := l.one(c, client, w, fmt.Sprintf("w%d-%d", w, seq), method, path)
				l.mu.Lock()
				l.answers = append(l.answers, a)
				l.mu.Unlock()
				time.Sleep(loadPace) // pacing, not waiting for a condition
			}
		}()
	}
	return l
}

// one sends one request until it has an answer: worker w enters at board
// w (ews1 the master, ews2 and ews3 followers) and moves on to the next
// board when one refuses the connection.
func (l *upLoad) one(c *upCluster, client *http.Client, w int, key, method, path string) upAnswer {
	a := upAnswer{start: time.Now()}
	entry := w
	for time.Since(a.start) < loadPerReq {
		b := c.boards[entry%len(c.boards)]
		a.what = fmt.Sprintf("%s: %s %s via %s", key, method, path, b.name)
		req, err := http.NewRequest(method, "https://"+b.https+path, nil)
		if err != nil {
			a.err = err.Error()
			return a
		}
		req.Header.Set("Authorization", "Bearer "+c.token)
		if method == http.MethodPost {
			req.Header.Set("Idempotency-Key", "upgrade-"+key)
		}
		resp, err := client.Do(req)
		if err != nil {
			if errors.Is(err, syscall.ECONNREFUSED) {
				a.otherBd++
				entry++
				time.Sleep(20 * time.Millisecond) // pacing before the next board
				continue
			}
			a.err, a.answered = err.Error(), time.Now()
			return a
		}
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		a.status, a.answered = resp.StatusCode, time.Now()
		if resp.StatusCode >= 300 {
			l.note(fmt.Sprintf("%d from %s: %s", resp.StatusCode, b.name, strings.TrimSpace(string(msg))))
		}
		if ra := resp.Header.Get("Retry-After"); resp.StatusCode == http.StatusServiceUnavailable && ra != "" {
			secs, err := strconv.Atoi(ra)
			if err != nil || secs < 0 || secs > 10 {
				a.err = "503 with a Retry-After that is not a number of seconds: " + ra
				return a
			}
			a.retried++
			time.Sleep(time.Duration(secs) * time.Second) // what Retry-After asks a client to do
			continue
		}
		return a
	}
	a.err = fmt.Sprintf("no answer other than 503 or a refused connection within %v", loadPerReq)
	return a
}

// note counts an answer other than 2xx by its text.
func (l *upLoad) note(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.notes[s]++
}

func (l *upLoad) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.answers)
}

// waitAnswers waits until the load has n answers.
func (l *upLoad) waitAnswers(t *testing.T, n int) {
	t.Helper()
	testutil.EventuallyWithin(t, fmt.Sprintf("%d answers to the load", n), 30*time.Second, func() bool { return l.count() >= n })
}

func (l *upLoad) stop() {
	close(l.done)
	l.wg.Wait()
}

// check fails on any request without a 2xx answer; a 503 with Retry-After
// that was sent again and then answered counts as answered (the README's
// rule for clients), and so does a request a restarting board refused the
// connection for, answered by the next board.
func (l *upLoad) check(t *testing.T, from, to time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var ok, during, retried, moved int
	var took []time.Duration
	byStatus := map[int]int{}
	var bad []string
	for _, a := range l.answers {
		byStatus[a.status]++
		if a.retried > 0 {
			retried++
		}
		if a.otherBd > 0 {
			moved++
		}
		if a.status >= 200 && a.status < 300 && a.err == "" {
			ok++
			took = append(took, a.answered.Sub(a.start))
			if a.answered.After(from) && a.start.Before(to) {
				during++
			}
			continue
		}
		bad = append(bad, fmt.Sprintf("%s -> %d %s (after %d retries, %d boards refused the connection)", a.what, a.status, a.err, a.retried, a.otherBd))
	}
	codes := make([]int, 0, len(byStatus))
	for c := range byStatus {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	var st []string
	for _, c := range codes {
		st = append(st, fmt.Sprintf("%d: %d", c, byStatus[c]))
	}
	slices.Sort(took)
	var p50, top time.Duration
	if len(took) > 0 {
		p50, top = took[len(took)/2], took[len(took)-1]
	}
	t.Logf("load: %d requests, %d answered 2xx (%d during the upgrade; median %v, slowest %v with its retries), %d after a 503 + Retry-After, %d on another board after a refused connection; final statuses {%s}",
		len(l.answers), ok, during, p50.Round(time.Millisecond), top.Round(time.Millisecond), retried, moved, strings.Join(st, ", "))
	notes := make([]string, 0, len(l.notes))
	for n := range l.notes {
		notes = append(notes, n)
	}
	slices.Sort(notes)
	for _, n := range notes {
		t.Logf("%d x %s", l.notes[n], n)
	}
	for i, b := range bad {
		if i == 20 {
			t.Errorf("... and %d more", len(bad)-i)
			break
		}
		t.Error(b)
	}
	if during < 30 {
		t.Errorf("only %d requests answered during the upgrade: the load did not test the mixed cluster", during)
	}
}
