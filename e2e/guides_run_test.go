package e2e

// The guides cannot rot: every code block of README.md and docs/guide/*.md fenced as ```sh run
// is run, in order, against a fresh `ews demo` per page (what the page says to start), with the
// `ews` binary of this tree first on PATH:
//
//	go test -run TestGuidesRun -v ./e2e/
//
// A block runs as one `bash -eo pipefail` script in a directory of the page's own (files made by
// one block are there for the next). The demo's URLs in a block (http://127.0.0.1:8081 to :8083,
// what `make demo` prints) are those of the test's demo, and any other loopback port 10000-19999
// a page names is a free one of the test's, the same across the page. A line `# => TEXT` says what the block's
// output holds: the test fails when TEXT is not in it. A command that is meant to fail is written
// `CMD || echo "exit $?"`, with `# => exit N` to check its exit code.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// guideBlock is one ```sh run block of a page.
type guideBlock struct {
	line   int // the fence's line
	script string
	expect []string // the `# => TEXT` lines' TEXT
}

// runBlocks returns the ```sh run blocks of the markdown file path.
func runBlocks(t *testing.T, path string) []guideBlock {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []guideBlock
	var cur *guideBlock
	var body []string
	for i, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case cur == nil && trimmed == "```sh run":
			cur, body = &guideBlock{line: i + 1}, nil
		case cur != nil && trimmed == "```":
			cur.script = strings.Join(body, "\n") + "\n"
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body = append(body, line)
			if text, ok := strings.CutPrefix(trimmed, "# => "); ok {
				cur.expect = append(cur.expect, text)
			}
		}
	}
	if cur != nil {
		t.Fatalf("%s:%d: a ```sh run block with no end", path, cur.line)
	}
	return out
}

func TestGuidesRun(t *testing.T) {
	beside(t, "starts ews demo for each guide with runnable blocks")
	pages, err := filepath.Glob("../docs/guide/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{"../README.md"}, pages...)
	bin := ewsBinary(t)
	pathDir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(pathDir, "ews")); err != nil {
		t.Fatal(err)
	}
	demoURL := regexp.MustCompile(`http://127\.0\.0\.1:808([1-3])`)
	// the other loopback ports a page names (its own boards): free ones of the test's, the same
	// for the same port across the page
	ownPort := regexp.MustCompile(`127\.0\.0\.1:(1[0-9]{4})\b`)
	ran := 0
	for _, page := range pages {
		blocks := runBlocks(t, page)
		if len(blocks) == 0 {
			continue
		}
		t.Run(filepath.Base(page), func(t *testing.T) {
			d := startDemo(t, 3)
			defer d.interrupt(t)
			work := t.TempDir()
			ports, base := map[string]int{}, 0
			for _, b := range blocks {
				// the page's own ports first: the demo's, once put in, are in that range too
				script := ownPort.ReplaceAllStringFunc(b.script, func(m string) string {
					if _, ok := ports[m]; !ok {
						if base == 0 {
							base = freeBase(t, 64)
						}
						ports[m] = base + len(ports)
					}
					return fmt.Sprintf("127.0.0.1:%d", ports[m])
				})
				script = demoURL.ReplaceAllStringFunc(script, func(m string) string {
					return strings.TrimSuffix(d.urls[fmt.Sprintf("ews%s", m[len(m)-1:])], "/")
				})
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				cmd := exec.CommandContext(ctx, "bash", "-eo", "pipefail", "-c", script)
				cmd.Dir = work
				cmd.Env = append(os.Environ(), "PATH="+pathDir+string(os.PathListSeparator)+os.Getenv("PATH"), "EWS_TOKEN=")
				out, err := cmd.CombinedOutput()
				cancel()
				if err != nil {
					t.Fatalf("%s:%d: the block fails: %v\n--- block:\n%s--- output:\n%s", page, b.line, err, script, out)
				}
				for _, want := range b.expect {
					if !strings.Contains(string(out), want) {
						t.Errorf("%s:%d: the output lacks %q\n--- output:\n%s", page, b.line, want, out)
					}
				}
				ran++
			}
		})
	}
	if ran == 0 {
		t.Fatal("no ```sh run block in README.md or docs/guide/: the test would prove nothing")
	}
	t.Logf("%d blocks run", ran)
}
