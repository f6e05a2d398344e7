package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/ews-firmware/ews/internal/tool/bench"
)

// netClientsArg makes this binary one site's clients in 003's distance
// experiment: run inside the site's namespace as `__net-clients JOB`, it
// times TCP connects to every board (a connect is one round trip), runs
// the closed loop of the job (ews bench's engine, clients that follow
// 307s and keep their assignment) and writes the result to the job's Out.
const netClientsArg = "__net-clients"

// netClientsJob is what one site's clients do.
type netClientsJob struct {
	URL      string        `json:"url"` // the site's door
	Clients  int           `json:"clients"`
	Think    time.Duration `json:"think"`
	Duration time.Duration `json:"duration"`
	Timeout  time.Duration `json:"timeout"`
	Seed     uint64        `json:"seed"`
	Boards   []string      `json:"boards"` // name=host:port, timed before the run
	Out      string        `json:"out"`
	// Pause is the wait between the connect timing and the run: the
	// boards' TCP_INFO of those connects reaches the master's dynamic
	// table by then (003's scheme 3, netscheme3.go); 0 in the other cells.
	Pause time.Duration `json:"pause,omitempty"`
}

// netClientsResult is a site's outcome: the generator's report and the
// median connect time to each board, ms.
type netClientsResult struct {
	Report *bench.Report      `json:"report"`
	RTT    map[string]float64 `json:"rtt_ms"`
}

func netClients(jobFile string) error {
	b, err := os.ReadFile(jobFile)
	if err != nil {
		return err
	}
	var job netClientsJob
	if err := json.Unmarshal(b, &job); err != nil {
		return fmt.Errorf("paper: %s: %w", jobFile, err)
	}
	res := netClientsResult{RTT: map[string]float64{}}
	for _, nb := range job.Boards {
		name, addr, _ := strings.Cut(nb, "=")
		res.RTT[name] = connectRTT(addr, 5)
	}
	time.Sleep(job.Pause) // a schedule, not a wait for a condition: the table is the cluster's
	classes, err := bench.ParseMix("page=1:GET /")
	if err != nil {
		return err
	}
	res.Report, err = bench.Run(context.Background(), bench.Config{URL: job.URL, Classes: classes, Duration: job.Duration,
		Seed: job.Seed, Timeout: job.Timeout, Closed: job.Clients, Clients: job.Clients, Think: job.Think})
	if err != nil {
		return err
	}
	out, err := json.Marshal(res)
	if err != nil {
		return err
	}
	tmp := job.Out + ".tmp"
	if err := os.WriteFile(tmp, out, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, job.Out)
}

// connectRTT is the median of n TCP connect times to addr, ms; -1 when
// none connected.
func connectRTT(addr string, n int) float64 {
	var ds []float64
	for range n {
		start := time.Now()
		c, err := net.DialTimeout("tcp", addr, 2*time.Second)
		if err != nil {
			continue
		}
		ds = append(ds, float64(time.Since(start))/float64(time.Millisecond))
		c.Close()
	}
	if len(ds) == 0 {
		return -1
	}
	slices.Sort(ds)
	return ds[len(ds)/2]
}
