package bench

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/term"
)

// headerFlag collects repeated --header "Name: value" flags.
type headerFlag struct{ h http.Header }

func (f *headerFlag) String() string { return "" }

func (f *headerFlag) Set(s string) error {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || !isToken(name) || strings.ContainsAny(value, "\r\n\x00") {
		return fmt.Errorf("want \"Name: value\", got %q", s)
	}
	f.h.Add(name, strings.TrimSpace(value))
	return nil
}

// isToken reports whether s is an RFC 9110 token, the syntax of a header name.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)
		if !ok {
			return false
		}
	}
	return true
}

// bodyFlag collects repeated --body CLASS=TEXT or CLASS=@FILE flags.
type bodyFlag struct{ m map[string][]byte }

func (f *bodyFlag) String() string { return "" }

func (f *bodyFlag) Set(s string) error {
	name, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(name) == "" {
		return fmt.Errorf("want CLASS=TEXT or CLASS=@FILE, got %q", s)
	}
	name = strings.TrimSpace(name)
	if _, dup := f.m[name]; dup {
		return fmt.Errorf("second body for class %q", name)
	}
	b := []byte(v)
	if path, isFile := strings.CutPrefix(v, "@"); isFile {
		var err error
		if b, err = os.ReadFile(path); err != nil {
			return err
		}
	}
	f.m[name] = b
	return nil
}

// Main is `ews bench`: it parses args (without the command name), runs and prints the report on
// stdout. Exit codes: 0 done, 1 runtime error (dead URL, interrupted run, --json not written,
// most requests refused with 401/403), 2 usage error (bad flag, malformed --mix).
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ews bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg     Config
		mix     string
		jsonOut string
		headers = headerFlag{h: http.Header{}}
		bodies  = bodyFlag{m: map[string][]byte{}}
	)
	fs.StringVar(&cfg.URL, "url", "", "base URL of the server (required), e.g. http://127.0.0.1:8080")
	cacert := fs.String("cacert", "", "PEM file of a CA to trust for an https --url (a TLS cluster's: `ews cluster ca BUNDLE > ca.pem`)")
	fs.Float64Var(&cfg.Rate, "rate", 0, "mean requests per second, Poisson arrivals (required)")
	fs.DurationVar(&cfg.Duration, "duration", 10*time.Second, "sending window")
	fs.Int64Var(&cfg.Max, "max", 0, "stop after this many arrivals (0: no cap)")
	fs.StringVar(&mix, "mix", "browse=1:GET /", "classes NAME=WEIGHT:METHOD PATH, comma-separated, e.g. \""+exampleMix+"\"")
	fs.Uint64Var(&cfg.Seed, "seed", 1, "seed of the arrival stream: same seed, same arrivals and classes")
	fs.StringVar(&jsonOut, "json", "", "also write the report as JSON to this file")
	fs.Var(&headers, "header", "extra request header \"Name: value\" (repeatable), e.g. \""+exampleHeader+"\"")
	fs.Var(&headers, "H", "short for --header")
	fs.Var(&bodies, "body", "request body of a class, CLASS=TEXT or CLASS=@FILE (repeatable); JSON gets Content-Type application/json")
	fs.DurationVar(&cfg.Timeout, "timeout", DefaultTimeout, "per-request timeout")
	fs.IntVar(&cfg.Concurrency, "concurrency", DefaultConcurrency, "cap on requests in flight; arrivals above it are counted as overflow, not sent")
	fs.IntVar(&cfg.Clients, "clients", 0, "simulated clients that follow 307s and keep redirect mode's assignment (own source address each against 127.0.0.1); 0: one client, no redirects followed")
	fs.IntVar(&cfg.Closed, "closed", 0, "closed loop: this many clients, each sends, waits for the answer, thinks (--think) and sends again; --rate is then not used")
	fs.BoolVar(&cfg.Trace, "trace", false, "ask each request's trace of the cluster (X-Ews-Trace) and report per class the time between its hand-offs in the --json report (classes[].trace)")
	fs.DurationVar(&cfg.Think, "think", 0, "closed loop: mean think time between a client's answer and its next request (exponential)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: ews bench --url URL --rate R [--duration D] [--max N] [--mix SPEC] [--seed S] [--json FILE] [--header H]... [--body CLASS=TEXT|@FILE]... [--timeout T] [--concurrency N] [--clients N] [--trace]\n")
		fs.PrintDefaults()
		fmt.Fprintf(stderr, "\nExample, against `make demo`:\n  ews bench --url http://127.0.0.1:8081 --rate 50 --duration 10s --header %q --mix %q\n", exampleHeader, exampleMix)
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	usage := func(format string, a ...any) int {
		say(stderr, fmt.Sprintf(format, a...))
		return 2
	}
	if fs.NArg() > 0 {
		return usage("unexpected argument %q", fs.Arg(0))
	}
	if cfg.URL == "" {
		return usage("--url is required")
	}
	if _, err := ParseURL(cfg.URL); err != nil {
		return usage("%v", err)
	}
	if cfg.Closed < 0 || cfg.Closed > MaxClients || cfg.Think < 0 {
		return usage("--closed %d --think %v: want 0..%d clients and a think time >= 0", cfg.Closed, cfg.Think, MaxClients)
	}
	if cfg.Closed == 0 && (!(cfg.Rate > 0) || cfg.Rate > 1e7) {
		return usage("--rate %v: want a number in (0, 1e7]", cfg.Rate)
	}
	if cfg.Duration <= 0 {
		return usage("--duration %v: want > 0", cfg.Duration)
	}
	if cfg.Max < 0 {
		return usage("--max %d: want >= 0", cfg.Max)
	}
	if cfg.Timeout <= 0 {
		return usage("--timeout %v: want > 0", cfg.Timeout)
	}
	if cfg.Concurrency <= 0 {
		return usage("--concurrency %d: want > 0", cfg.Concurrency)
	}
	if cfg.Clients < 0 || cfg.Clients > MaxClients {
		return usage("--clients %d: want 0..%d", cfg.Clients, MaxClients)
	}
	if *cacert != "" {
		pem, err := os.ReadFile(*cacert)
		pool := x509.NewCertPool()
		if err != nil || !pool.AppendCertsFromPEM(pem) {
			return usage("--cacert %s: want a PEM certificate file (%v)", *cacert, err)
		}
		tr := NewTransport(cfg.Concurrency)
		tr.TLSClientConfig = &tls.Config{RootCAs: pool}
		cfg.Transport = tr
	}
	classes, err := ParseMix(mix)
	if err != nil {
		return usage("%v", err)
	}
	cfg.Classes = classes
	for name := range bodies.m {
		if !slices.ContainsFunc(classes, func(c Class) bool { return c.Name == name }) {
			return usage("--body for class %q, which is not in --mix", name)
		}
	}
	cfg.Header, cfg.Bodies = headers.h, bodies.m
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		cfg.Progress = stderr
	}

	rep, err := Run(ctx, cfg)
	if err != nil {
		say(stderr, err.Error())
		return 1
	}
	if err := rep.WriteText(stdout); err != nil {
		fmt.Fprintf(stderr, "ews bench: write report: %v\n", err)
		return 1
	}
	code := 0
	if jsonOut != "" {
		if err := rep.WriteJSONFile(jsonOut); err != nil {
			say(stderr, err.Error())
			code = 1
		}
	}
	if rep.Interrupted {
		code = 1
	}
	if hint, most := rep.deniedHint(); hint != "" {
		say(stderr, hint)
		if most {
			code = 1
		}
	}
	return code
}

// say prints msg as one "ews bench: ..." line; package errors already start with "bench: ".
func say(w io.Writer, msg string) {
	if !strings.HasPrefix(msg, "bench: ") {
		msg = "bench: " + msg
	}
	fmt.Fprintf(w, "ews %s\n", msg)
}
