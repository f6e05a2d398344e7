package bootkey

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/ews-firmware/ews/internal/config"
)

// lineMove is one secret moved off the boot file (Migrate's key,
// MigrateToken's token): the one line holding it is rewritten to newLine
// in the boot file and to note in the backup kept beside it.
type lineMove struct {
	key           string         // the config key, for errors: "cluster.key"
	re            *regexp.Regexp // the one-line form the line must have; group 1 its indent
	form          string         // how to write it so, for errors
	line          int            // 1-based line of key in the boot file
	write         func() error   // puts the secret into its own file first
	check         func(next *config.Config) error
	newLine, note string
}

// apply writes the secret, then the backup and the rewritten boot file
// once the rewritten file loads and check accepts it; it returns the
// backup's path. Errors name the boot file at path; nothing is rewritten
// on an error.
func (m lineMove) apply(path string, orig []byte, opts Options) (string, error) {
	rewritten, err := m.replace(orig, m.newLine)
	var backup []byte
	if err == nil {
		backup, err = m.replace(orig, m.note)
	}
	if err != nil {
		return "", fmt.Errorf("bootkey: %s: %w", path, err)
	}
	if err := m.write(); err != nil {
		return "", err
	}
	return rewriteBoot(path, rewritten, backup, opts, m.check)
}

// replace swaps line m.line of data, which must be m.key's one line
// `name = "..."`, for repl, keeping its indent and line ending.
func (m lineMove) replace(data []byte, repl string) ([]byte, error) {
	n := m.line
	if n <= 0 {
		return nil, fmt.Errorf("cannot find the line of %s", m.key)
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	if n > len(lines) {
		return nil, fmt.Errorf("line %d of %s is past the end of the file", n, m.key)
	}
	body := bytes.TrimRight(lines[n-1], "\r\n")
	eol := lines[n-1][len(body):]
	section, name, _ := strings.Cut(m.key, ".")
	// one line `name = "..."` (or '...') with an optional comment
	re := regexp.MustCompile(`^(\s*)` + name + `\s*=\s*("[^"\\]*"|'[^']*')\s*(#.*)?$`)
	sub := re.FindSubmatch(body)
	if sub == nil {
		return nil, fmt.Errorf("line %d: cannot rewrite %q: write the %s as one line `%s = \"...\"` under [%s]", n, body, name, name, section)
	}
	lines[n-1] = append(append(append([]byte{}, sub[1]...), repl...), eol...)
	return bytes.Join(lines, nil), nil
}

// rewriteBoot replaces the boot file at path with rewritten once it loads
// and check accepts what it loads as, keeping backup beside it (path.bak)
// first; it returns the backup's path. Nothing is written when the
// rewritten file would not load or check refuses it.
func rewriteBoot(path string, rewritten, backup []byte, opts Options, check func(next *config.Config) error) (string, error) {
	next, err := config.Parse(path, rewritten)
	if err != nil {
		return "", fmt.Errorf("bootkey: rewritten %s would not load: %w", path, err)
	}
	if err := check(next); err != nil {
		return "", fmt.Errorf("bootkey: rewritten %s %w", path, err)
	}
	bak := path + ".bak"
	if err := opts.WriteFile(bak, backup, 0o600); err != nil {
		return "", fmt.Errorf("bootkey: write backup %s: %w", bak, err)
	}
	if err := opts.WriteFile(path, rewritten, 0o600); err != nil {
		return "", fmt.Errorf("bootkey: rewrite %s: %w", path, err)
	}
	return bak, nil
}
