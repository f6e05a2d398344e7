// Command bare measures what the testbed itself adds to a request: go run ./scripts/bare --serve ADDR | --url URL [--method M] [--n N] [--gap D].
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"time"

	"github.com/ews-firmware/ews/internal/tool/bench"
)

func main() {
	serve := flag.String("serve", "", "serve on this address: GET / answers at once, GET /sleep after --sleep (a simulated device's op)")
	sleep := flag.Duration("sleep", 20*time.Millisecond, "what /sleep waits before it answers")
	url := flag.String("url", "", "time --n sequential requests to this URL on one kept-alive connection")
	method := flag.String("method", http.MethodGet, "the requests' method")
	n := flag.Int("n", 300, "how many requests")
	gap := flag.Duration("gap", 20*time.Millisecond, "the pause between one answer and the next request")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var err error
	switch {
	case *serve != "":
		err = run(ctx, *serve, *sleep)
	case *url != "":
		var ds []time.Duration
		if ds, err = measure(ctx, http.DefaultClient, *method, *url, *n, *gap); err == nil {
			fmt.Println(summary(ds))
		}
	default:
		err = errors.New("bare: --serve or --url")
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// handler answers "/" at once and "/sleep" after sleep: net/http with
// nothing of ews in it.
func handler(sleep time.Duration) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok\n") })
	mux.HandleFunc("/sleep", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(sleep):
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, "ok\n")
	})
	return mux
}

func run(ctx context.Context, addr string, sleep time.Duration) error {
	srv := &http.Server{Addr: addr, Handler: handler(sleep), ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("bare: %w", err)
	}
	return nil
}

// measure sends n requests one after another, gap apart, and returns each
// one's time from sending to the end of its body; any answer but 2xx is an
// error.
func measure(ctx context.Context, c *http.Client, method, url string, n int, gap time.Duration) ([]time.Duration, error) {
	ds := make([]time.Duration, 0, n)
	for i := range n {
		req, err := http.NewRequestWithContext(ctx, method, url, nil)
		if err != nil {
			return nil, fmt.Errorf("bare: %w", err)
		}
		t := time.Now()
		resp, err := c.Do(req)
		if err != nil {
			return nil, fmt.Errorf("bare: request %d: %w", i, err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("bare: request %d: %w", i, err)
		}
		if resp.StatusCode/100 != 2 {
			return nil, fmt.Errorf("bare: request %d: %s", i, resp.Status)
		}
		ds = append(ds, time.Since(t))
		select {
		case <-time.After(gap):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return ds, nil
}

// summary is "n=N p50=… p90=… p99=… max=… ms" (bench.Summarize: nearest rank).
func summary(ds []time.Duration) string {
	if len(ds) == 0 {
		return "n=0"
	}
	l := bench.Summarize(ds)
	return fmt.Sprintf("n=%d p50=%.2f p90=%.2f p99=%.2f max=%.2f ms", len(ds), l.P50, l.P90, l.P99, l.Max)
}
