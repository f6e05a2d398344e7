package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/ews-firmware/ews/internal/testkit/testutil"
)

// subcommands are the commands whose second word is a subcommand.
var subcommands = map[string]bool{"config": true, "cluster": true, "firmware": true, "user": true}

// guideCommands are the `ews ...` command lines of a markdown file: the
// lines of its code blocks that start with "ews " (or "$ ews "), joined
// across a trailing backslash, and its inline code spans that start with
// "ews ", each with the line it is on.
func guideCommands(t *testing.T, path string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	inline := regexp.MustCompile("`(ews [^`]+)`")
	inBlock, cont, contLine := false, "", 0
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if !inBlock {
			for _, m := range inline.FindAllStringSubmatch(line, -1) {
				out[m[1]] = i + 1
			}
			continue
		}
		l := strings.TrimSpace(line)
		if cont != "" {
			l = cont + " " + l
		} else {
			contLine = i + 1
			l = strings.TrimPrefix(l, "$ ")
			if !strings.HasPrefix(l, "ews ") {
				continue
			}
		}
		if strings.HasSuffix(l, "\\") {
			cont = strings.TrimSuffix(l, "\\")
			continue
		}
		cont = ""
		if c, _, ok := strings.Cut(l, " #"); ok { // a trailing comment
			l = c
		}
		out[l] = contLine
	}
	return out
}

// guideProblems checks the `ews` command lines of the markdown file path
// against the CLI: each names a command that exists (its own usage, -h,
// is the reference) and only flags that command takes. It returns the
// problems and how many command lines it checked.
func guideProblems(t *testing.T, path string) ([]string, int) {
	t.Helper()
	flagRe := regexp.MustCompile(`(?:^|\s)--([a-z][a-z0-9-]*)`)
	lower := regexp.MustCompile(`^[a-z][a-z-]*$`)
	var problems []string
	checked := 0
	for cmd, line := range guideCommands(t, path) {
		// a reference line lists alternatives: ews config check PATH | init | pull ...
		alts := strings.Split(strings.TrimPrefix(cmd, "ews "), " | ")
		parent := ""
		for i, alt := range alts {
			words := strings.Fields(alt)
			if len(words) == 0 || !lower.MatchString(words[0]) || i == 0 && isMessage(words) {
				continue
			}
			var cmdPath []string
			switch {
			case i == 0 && subcommands[words[0]] && len(words) > 1 && lower.MatchString(words[1]):
				cmdPath, parent = words[:2], words[0]
			case i == 0:
				cmdPath, parent = words[:1], ""
			case parent != "":
				cmdPath = []string{parent, words[0]}
			default:
				continue
			}
			checked++
			name := strings.Join(cmdPath, " ")
			_, _, usage := run(append(append([]string{}, cmdPath...), "-h")...)
			if !strings.Contains(usage, "Usage: ews "+name) {
				// config check|init|migrate-key answer with the config command's usage
				_, _, top := run(cmdPath[0], "-h")
				if len(cmdPath) == 2 && strings.Contains(top, "Usage: ews "+cmdPath[0]+" ") && regexp.MustCompile(`\b`+regexp.QuoteMeta(cmdPath[1])+`\b`).MatchString(top) {
					continue
				}
				problems = append(problems, fmt.Sprintf("%s:%d: `%s`: no command ews %s", path, line, cmd, name))
				continue
			}
			for _, m := range flagRe.FindAllStringSubmatch(alt, -1) {
				if !strings.Contains(usage, "\n  -"+m[1]+" ") && !strings.Contains(usage, "\n  -"+m[1]+"\n") {
					problems = append(problems, fmt.Sprintf("%s:%d: `%s`: ews %s takes no --%s", path, line, cmd, name, m[1]))
				}
			}
		}
	}
	sort.Strings(problems)
	return problems, checked
}

// isMessage reports whether words are a message the CLI prints ("ews
// config push: give --version N ...") rather than a command.
func isMessage(words []string) bool {
	for _, w := range words[:min(3, len(words))] {
		if strings.HasSuffix(w, ":") {
			return true
		}
	}
	return false
}

// Every `ews` command line the README and the guides show names a command
// that exists and only flags that command takes, so the guides cannot
// drift from the CLI.
func TestGuidesCommandsExist(t *testing.T) {
	files, _ := filepath.Glob("../../docs/guide/*.md")
	files = append(files, "../../README.md")
	total := 0
	for _, f := range files {
		problems, n := guideProblems(t, f)
		total += n
		for _, p := range problems {
			t.Error(p)
		}
	}
	if total < 40 {
		t.Fatalf("checked %d command lines: the extraction is broken", total)
	}
}

// The check itself: a renamed flag, a command that does not exist, a
// reference line's alternatives, a command continued over lines.
func TestGuideProblems(t *testing.T) {
	md := filepath.Join(t.TempDir(), "g.md")
	doc := "Run `ews status --url U --cacert ca.pem` or `ews status --frob`; `ews config push: give --version N` is a message.\n\n```sh\n" +
		"$ ews cluster board ews2 --addr 10.0.0.12 \\\n    --bundle admin.bundle --outfile x\n" +
		"ews config pull --url U | push FILE --nope\n" +
		"ews teleport --url U   # no such command\n" +
		"make demo\n```\n"
	testutil.WriteFile(t, md, []byte(doc), 0o644)
	problems, n := guideProblems(t, md)
	want := []string{"ews cluster board takes no --outfile", "ews config push takes no --nope", "ews status takes no --frob", "no command ews teleport"}
	if n != 6 || len(problems) != len(want) {
		t.Fatalf("checked %d, problems:\n%s", n, strings.Join(problems, "\n"))
	}
	for _, w := range want {
		found := false
		for _, p := range problems {
			found = found || strings.Contains(p, w)
		}
		if !found {
			t.Errorf("no problem saying %q in:\n%s", w, strings.Join(problems, "\n"))
		}
	}
}
