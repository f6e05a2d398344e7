package liveconf_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/automation"
	"github.com/ews-firmware/ews/node/bootconf"
	"github.com/ews-firmware/ews/node/durable"
	"github.com/ews-firmware/ews/node/liveconf"
)

// fakeDevices records the device sets a version asks for.
type fakeDevices struct{ applied []hal.Config }

func (f *fakeDevices) Apply(c hal.Config) (hal.Applied, error) {
	f.applied = append(f.applied, c)
	var names []string
	for _, d := range c.Devices {
		names = append(names, d.Name)
	}
	return hal.Applied{Opened: names}, nil
}

const bootText = "[node]\nname = \"ews1\"\n[sim]\n[[device]]\nname = \"relay1\"\ndriver = \"sim-switch\"\n"

// TestVersionsApplied: the seed of the board's own sections changes
// nothing but the version; a version with another device set is applied
// to the devices, stored where the request path reads it, and published;
// a scheduler change reconfigures the master; another board's status
// speaks for that board only.
func TestVersionsApplied(t *testing.T) {
	cfg, err := config.Parse("ews1.toml", []byte(bootText), bootconf.CheckConfig)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bootconf.Map(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var live atomic.Pointer[liveconf.Config]
	live.Store(b.Live(0))
	devs := &fakeDevices{}
	published := make(chan liveconf.Status, 4)
	var reconfigured, automations, applied int
	m, err := liveconf.New(liveconf.Options{Board: b.State.Name, Seed: b.StoreSeed, Now: b.Clock.Now,
		Check: bootconf.CheckStore(b.StoreOwn), Map: b.MapVersion, RestartNeeded: b.RestartNeeded, Live: &live, State: durable.NewAlone(slog.New(slog.DiscardHandler)), Devices: devs,
		Reconfigure: func() { reconfigured++ },
		Automation:  func(automation.Config) error { automations++; return nil },
		Applied:     func() { applied++ },
		Publish:     func(st liveconf.Status) { published <- st },
		Guard:       func(h http.Handler) http.Handler { return h },
		Who:         func(*http.Request) (string, bool) { return "admin", true },
		Logger:      slog.New(slog.DiscardHandler)}, map[string]string{"relay9": "no such pin"})
	if err != nil {
		t.Fatal(err)
	}
	if own := m.Own(); own.Board != "ews1" || own.Failed["relay9"] == "" {
		t.Fatalf("the status at start: %+v", own)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); <-done }()

	m.Seed(ctx)
	st := <-published
	if st.Version != 1 || len(devs.applied) != 0 || live.Load().Version != 1 {
		t.Fatalf("the seed: status %+v, applied %d, live version %d", st, len(devs.applied), live.Load().Version)
	}

	text := "[sched]\npolicy = \"rr\"\n[[device]]\nname = \"fan\"\ndriver = \"sim-switch\"\n"
	if _, err := m.Store().Put(ctx, []byte(text), 1, "admin", "a fan"); err != nil {
		t.Fatal(err)
	}
	st = <-published
	if st.Version != 2 || !slices.Equal(st.Opened, []string{"fan"}) || st.Error != "" {
		t.Fatalf("the second version's status: %+v", st)
	}
	if l := live.Load(); l.Version != 2 || len(l.HAL.Devices) != 1 || l.Sched.Policy != "rr" {
		t.Fatalf("what runs now: %+v", l)
	}
	if len(devs.applied) != 1 || reconfigured != 1 || automations != 1 || applied != 1 {
		t.Fatalf("applied %d, reconfigured %d, automations %d, published devices %d", len(devs.applied), reconfigured, automations, applied)
	}

	m.Remote("ews2", liveconf.Status{Board: "ews1", Version: 2})
	mux := http.NewServeMux()
	m.Routes(mux)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/api/config/status", nil))
	var got struct {
		Version uint64            `json:"version"`
		Boards  []liveconf.Status `json:"boards"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || got.Version != 2 || len(got.Boards) != 2 ||
		got.Boards[0].Board != "ews1" || got.Boards[1].Board != "ews2" {
		t.Fatalf("GET /api/config/status: %d %s", rec.Code, rec.Body)
	}
}
