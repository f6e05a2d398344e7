package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// linToken is the admin token of TestLinearizable's cluster.
const linToken = "lin-admin-token-0123456789abcdef"

// linPlan is one run: how many boards, how long the clients run, the
// nemesis's seed. The short form is the default test run's; the long one
// (EWS_VERIFY=1, make verify) takes its figures from the environment.
type linPlan struct {
	boards   int
	clients  int
	duration time.Duration
	seed     uint64
	maxOps   int           // per client: every load loop is bounded in count as in time
	upgrades int           // rolling upgrades the nemesis runs at most
	check    time.Duration // the checker's bound per model: past it the verdict is unknown
}

func linPlanFromEnv(t *testing.T) linPlan {
	p := linPlan{boards: 3, clients: 6, duration: 35 * time.Second, seed: 1, maxOps: 2000, check: 20 * time.Second, upgrades: 1}
	if s := os.Getenv("EWS_VERIFY_SEED"); s != "" {
		seed, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("EWS_VERIFY_SEED=%q: %v", s, err)
		}
		p.seed = seed
	}
	if os.Getenv("EWS_VERIFY") == "" {
		return p
	}
	p.boards, p.clients, p.duration, p.maxOps, p.check, p.upgrades = 5, 10, 5*time.Minute, 100000, 10*time.Minute, 5
	for _, e := range []struct {
		key string
		set func(string) error
	}{
		{"EWS_VERIFY_BOARDS", func(s string) (err error) { p.boards, err = strconv.Atoi(s); return }},
		{"EWS_VERIFY_CLIENTS", func(s string) (err error) { p.clients, err = strconv.Atoi(s); return }},
		{"EWS_VERIFY_DURATION", func(s string) (err error) { p.duration, err = time.ParseDuration(s); return }},
	} {
		if s := os.Getenv(e.key); s != "" {
			if err := e.set(s); err != nil {
				t.Fatalf("%s=%q: %v", e.key, s, err)
			}
		}
	}
	return p
}

// TestLinearizable is the history checker over real boards: clients at
// every board (followers too) run random operations on the users store,
// the configuration (PUT with If-Match) and a relay, while a seeded
// nemesis kills -9, restarts and pauses boards; each store's history is
// checked with porcupine against its model (linear_models_test.go). A
// line per model, VERIFY model=NAME ops=N linearizable=yes|no; a failing
// history is saved as porcupine's HTML page, its path logged.
func TestLinearizable(t *testing.T) {
	beside(t, "starts boards and hurts them") // its boards, in namespaces of its own; correctness, not timing
	p := linPlanFromEnv(t)
	t.Logf("plan: %d boards, %d clients, %v, seed %d (EWS_VERIFY_SEED=%d replays the nemesis's schedule)", p.boards, p.clients, p.duration, p.seed, p.seed)
	bins := [2]string{ewsBinary(t), versionBinary(t, "lin-next")} // a rolling upgrade's two builds
	net, boards, configure := linCluster(t, bins[0], p.boards)
	relayOn := linRelayState(t, boards[0])
	cfgVer := linConfigVersion(t, boards[0])
	h := newLinHistory()

	ctx, cancel := context.WithTimeout(context.Background(), p.duration)
	defer cancel()
	nem := &linNemesis{t: t, boards: boards, net: net, bins: bins, on: make([]int, len(boards)), configure: configure,
		rng: rand.New(rand.NewPCG(p.seed, 0)), start: h.start, upgrades: p.upgrades}
	var wg sync.WaitGroup
	wg.Go(func() { nem.run(ctx) })
	for c := range p.clients {
		cl := &linClient{id: c, entry: boards[c%len(boards)], boards: boards, h: h,
			rng: rand.New(rand.NewPCG(p.seed, uint64(c)+1))}
		wg.Go(func() { cl.run(ctx, p.maxOps) })
	}
	wg.Wait()
	// then the boards' revocations, racing from every board (the list only
	// grows, and a revocation ends a board's part: they come last)
	linRevokes(t, h, boards, p.seed)

	total := 0
	for _, m := range []struct {
		name  string
		model porcupine.Model
		least int // known answers below which the history says nothing
	}{{"users", usersModel, 10}, {"config", configModel(cfgVer), 10}, {"relay", relayModel(relayOn), 10}, {"revoke", revokeModel(len(boards)), 2}} {
		ops, unknown := h.of(m.name)
		if m.name == "config" {
			var pruned int
			ops, pruned = pruneConfig(ops)
			unknown -= pruned
			t.Logf("model config: %d indeterminate PUTs left out: another PUT was answered the version they would have made", pruned)
		}
		total += len(ops)
		// the plain check first: the verbose one (the page's partial
		// linearizations) holds far more memory, and only a refused
		// history needs it
		res := porcupine.CheckOperationsTimeout(m.model, ops, p.check)
		verdict := map[porcupine.CheckResult]string{porcupine.Ok: "yes", porcupine.Illegal: "no", porcupine.Unknown: "unknown"}[res]
		fmt.Printf("VERIFY model=%s ops=%d linearizable=%s\n", m.name, len(ops), verdict)
		t.Logf("model %s: %d operations, %d indeterminate: linearizable %s; answers %v; indeterminate for %v", m.name, len(ops), unknown, verdict, answers(ops), unknowns(ops))
		if res != porcupine.Ok {
			_, info := porcupine.CheckOperationsVerbose(m.model, ops, p.check)
			t.Errorf("model %s: the history is not shown linearizable (%s); the page: %s", m.name, res, linSave(t, m.name, p.seed, m.model, info, ops))
		}
		if len(ops)-unknown < m.least { // a history of unknowns is linearizable and says nothing
			t.Errorf("model %s: %d operations with a known answer of %d: too few to judge", m.name, len(ops)-unknown, len(ops))
		}
	}
	t.Logf("%d operations (and %d refused connections, not recorded); nemesis: %s", total, h.refusals, nem.summary())
	if total == 0 {
		t.Fatal("no operation recorded")
	}
}

// answers counts a history's operations by operation and answer, for the
// log: "create 201" 40, "read 200" 12, "toggle unknown" 2...
func answers(ops []porcupine.Operation) map[string]int {
	n := map[string]int{}
	for _, op := range ops {
		what := fmt.Sprint(op.Input)
		switch in := op.Input.(type) {
		case linUser:
			what = in.Op
		case linRelay:
			what = in.Op
		case linConfig:
			what = "put"
		case linRevoke:
			what = "revoke"
		}
		out := op.Output.(linOut)
		code := "unknown"
		if !out.unknown() {
			code = strconv.Itoa(out.Code)
		}
		n[what+" "+code]++
	}
	return n
}

// unknowns counts a history's indeterminate operations by why (the
// answer or the client's error, cut to its first words), for the log.
func unknowns(ops []porcupine.Operation) map[string]int {
	n := map[string]int{}
	for _, op := range ops {
		if out := op.Output.(linOut); out.unknown() {
			why := out.Error
			if _, rest, ok := strings.Cut(why, `": `); ok && strings.Contains(why, `"http://`) {
				why = rest // the client's error without its method and URL
			}
			if len(why) > 60 {
				why = why[:60]
			}
			n[why]++
		}
	}
	return n
}

// linSave writes a failing history as porcupine's HTML page under
// $EWS_VERIFY_OUT (else the system's temp dir), and its operations as
// JSON beside it, and returns the page's path.
func linSave(t *testing.T, model string, seed uint64, m porcupine.Model, info porcupine.LinearizationInfo, ops []porcupine.Operation) string {
	dir := os.Getenv("EWS_VERIFY_OUT")
	if dir == "" {
		dir = os.TempDir()
	}
	path := filepath.Join(dir, fmt.Sprintf("ews-verify-%s-seed%d-%d.html", model, seed, time.Now().Unix()))
	if err := porcupine.VisualizePath(m, info, path); err != nil {
		t.Errorf("e2e: save the history of %s: %v", model, err)
	}
	if b, err := json.Marshal(ops); err == nil {
		writeFile(t, strings.TrimSuffix(path, ".html")+".json", string(b))
	}
	return path
}

// linCluster starts n token-auth boards (in network namespaces where it
// can: linNet), each keeping its state (the durable log, the outputs)
// under its own state_dir, with relay1 on the second board, and waits
// until every board runs and holds the seeded admin. configure writes a
// board's config again with its clock ([sim] clock_offset) offset, for
// its next start or SIGUSR1.
func linCluster(t *testing.T, bin string, n int) (net *linNet, boards []*board, configure func(b *board, offset time.Duration)) {
	t.Helper()
	net, boards = newLinNet(t, n)
	dir, key, peers := t.TempDir(), config.NewKey(), peersOf(boards)
	configure = func(b *board, offset time.Duration) {
		c := boardTOML{
			node:    fmt.Sprintf("capacity = 4\nstate_dir = %q\n", filepath.Join(dir, b.name)),
			cluster: "tmax = \"600ms\"\ntthreshold = \"600ms\"\nheartbeat = \"100ms\"\n",
			rest: fmt.Sprintf("[http]\nauth = \"token\"\ntoken = %q\n[sim]\ndevice_latency = \"2ms\"\n%s"+
				"[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\nnode = %q\n", linToken, clockOffset(offset), boards[min(1, n-1)].name),
		}
		b.cfg, b.key = filepath.Join(dir, b.name+".toml"), key
		writeFile(t, b.cfg, c.doc(b, peers, key))
	}
	for _, b := range boards {
		configure(b, 0)
		b.start(t, bin)
	}
	waitRunning(t, boards, ", the admin seeded", func(b *board) bool {
		got, _ := accSession(b, "")["users_version"].(float64)
		return got >= accSeed
	})
	return net, boards, configure
}

// clockOffset is the [sim] key that runs a board's clock offset off; none
// for 0.
func clockOffset(offset time.Duration) string {
	if offset == 0 {
		return ""
	}
	return fmt.Sprintf("clock_offset = %q\n", offset.String())
}

// linRelayState reads relay1 before the clients start: the model's
// initial state.
func linRelayState(t *testing.T, b *board) bool {
	t.Helper()
	var on bool
	testutil.EventuallyWithin(t, "relay1 read", 15*time.Second, func() bool {
		out, err := linDo(context.Background(), b, "POST", "/api/devices/relay1/read", "", "")
		on = out.On
		return err == nil && out.Code == http.StatusOK
	})
	return on
}

// linConfigVersion is the configuration's version before the clients
// start: the model's initial state.
func linConfigVersion(t *testing.T, b *board) uint64 {
	t.Helper()
	var v uint64
	testutil.EventuallyWithin(t, "the configuration store seeded", 15*time.Second, func() bool {
		var err error
		v, _, err = linGetConfig(context.Background(), b)
		return err == nil && v > 0
	})
	return v
}

// linHTTP bounds one operation: past it the outcome is unknown.
var linHTTP = &http.Client{Timeout: 5 * time.Second}

// linDo sends one request as the admin and reads the answer into a
// linOut: the status, the relay's state or the ETag's version.
func linDo(ctx context.Context, b *board, method, path, ifMatch, body string) (linOut, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://"+b.http+path, strings.NewReader(body))
	if err != nil {
		return linOut{}, err
	}
	req.Header.Set("Authorization", "Bearer "+linToken)
	if ifMatch != "" {
		req.Header.Set("If-Match", ifMatch)
		req.Header.Set("Content-Type", "application/toml")
	} else if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := linHTTP.Do(req)
	if err != nil {
		return linOut{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return linOut{}, err
	}
	out := linOut{Code: resp.StatusCode}
	if v, err := strconv.ParseUint(strings.Trim(resp.Header.Get("ETag"), `"`), 10, 64); err == nil {
		out.Ver = v
	}
	var dev struct {
		State string `json:"state"`
		Error string `json:"error"`
		At    string `json:"at"` // a revocation's
	}
	if json.Unmarshal(raw, &dev) == nil {
		out.On, out.Error, out.At = dev.State == "on", dev.Error, dev.At
	}
	return out, nil
}

// linGetConfig reads the configuration (a board's own copy) and its version.
func linGetConfig(ctx context.Context, b *board) (uint64, string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", "http://"+b.http+"/api/config", nil)
	if err != nil {
		return 0, "", err
	}
	req.Header.Set("Authorization", "Bearer "+linToken)
	resp, err := linHTTP.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return 0, "", fmt.Errorf("e2e: GET /api/config on %s: %d %v", b.name, resp.StatusCode, err)
	}
	v, err := strconv.ParseUint(strings.Trim(resp.Header.Get("ETag"), `"`), 10, 64)
	return v, string(raw), err
}
