package bootconf

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"

	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/automation"
	"github.com/ews-firmware/ews/node/confstore"
	"github.com/ews-firmware/ews/node/liveconf"
	"github.com/pelletier/go-toml/v2"
)

// storeTexts splits the boot config into the configuration store's part
// (confstore.Sections: the seed of the store) and the board's own
// sections, each as TOML (docs/NOTES.md "Configuration store"). They come
// from the file as written when it can be read (its values, not the
// defaults filled in), else from the parsed config.
func storeTexts(c *config.Config) (seed, own []byte) {
	var doc map[string]any
	if c.Path != "" {
		if b, err := os.ReadFile(c.Path); err == nil && toml.Unmarshal(b, &doc) == nil {
			return splitSections(doc)
		}
	}
	// a config parsed from memory: through its own encoding
	b, err := toml.Marshal(c)
	if err != nil || toml.Unmarshal(b, &doc) != nil {
		return nil, nil
	}
	return splitSections(doc)
}

func splitSections(doc map[string]any) (seed, own []byte) {
	shared, mine := map[string]any{}, map[string]any{}
	for k, v := range doc {
		if a, ok := v.([]any); ok && len(a) == 0 {
			continue // rule = []: a value outside any table (rootValue)
		}
		if slices.Contains(confstore.Sections, k) {
			shared[k] = v
		} else {
			mine[k] = v
		}
	}
	seed, _ = toml.Marshal(shared)
	own, _ = toml.Marshal(mine)
	return seed, own
}

// storeFile names the document in the errors of its check.
const storeFile = "cluster.toml"

// CheckStore is the check of a configuration store document on this
// board: the document after this board's own sections, run
// through config's parsing and CheckConfig as `ews config check` runs a
// boot file, so each problem names the document's line and key. A key
// that is a board's own is refused: it stays in the boot file.
func CheckStore(own []byte) func(text []byte) []confstore.Problem {
	check := checkStoreErrors(own)
	return func(text []byte) []confstore.Problem {
		errs := check(text)
		ps := make([]confstore.Problem, len(errs))
		for i, e := range errs {
			ps[i] = confstore.Problem{Line: e.Line, Key: e.Key, Msg: e.Msg, Text: e.Error(), Warning: e.Warning}
		}
		return ps
	}
}

// checkStoreErrors is CheckStore's check, answering config's errors.
func checkStoreErrors(own []byte) func(text []byte) config.Errors {
	return func(text []byte) config.Errors {
		if errs := config.Wide(storeFile, text); errs != nil {
			return errs // before the decoder, whose cost grows with the square of a table's keys
		}
		var doc map[string]any
		if err := toml.Unmarshal(text, &doc); err != nil {
			_, errs := config.ParseAll(storeFile, text)
			return errs
		}
		var errs config.Errors
		var lines map[string]int // built once, when a key needs its line
		for k := range doc {
			if !slices.Contains(confstore.Sections, k) {
				if lines == nil {
					lines = topLines(text)
				}
				errs = append(errs, &config.Error{File: storeFile, Line: lines[k], Key: k,
					Msg: fmt.Sprintf("a board's own section: it stays in the boot file (the store holds %v)", confstore.Sections)})
			}
		}
		if l := rootValue(text); l > 0 && len(errs) == 0 {
			errs = append(errs, &config.Error{File: storeFile, Line: l,
				Msg: "a value outside any table: write each section as a table ([mqtt], [[device]], ...)"})
		}
		if len(errs) > 0 {
			errs.Sort()
			return errs
		}
		// the board's own first: a root key of theirs (supervise = [])
		// would fall into the document's last table after it
		head := append(slices.Clone(bytes.TrimRight(own, "\n")), '\n') // own is shared by every check: never append into it
		if len(own) == 0 {
			head = nil
		}
		skip := bytes.Count(head, []byte("\n"))
		_, found := config.ParseAll(storeFile, append(head, text...), CheckConfig)
		for _, e := range found {
			if e.Line > skip {
				e.Line -= skip
			} else if e.Line > 0 || e.Key != "" { // about the board's own sections: no line of the document
				e.Line, e.Col = 0, 0
				e.Msg += " (with this board's own sections)"
			}
		}
		return found
	}
}

// rootValue is the line of the first value written before any table
// header (in the check, it would fall into the board's last own table);
// 0 when none.
func rootValue(text []byte) int {
	for i, l := range bytes.Split(text, []byte("\n")) {
		l = bytes.TrimSpace(l)
		switch {
		case len(l) == 0 || l[0] == '#':
		case l[0] == '[':
			return 0
		default:
			return i + 1
		}
	}
	return 0
}

// topLines maps each key a line starts with (a table header's first
// part, "[mqtt]" or "[[device]]", or a value's key, "k = 1") to the first
// line it is on: one pass over the text, so naming the line of every key
// of a document costs O(n) (a scan per key was quadratic: 250 KB of
// unknown keys took seconds). Bare keys only, as they are written.
func topLines(text []byte) map[string]int {
	out := map[string]int{}
	for i, l := range bytes.Split(text, []byte("\n")) {
		l = bytes.TrimLeft(l, " \t\r")
		stop := "= \t"
		if len(l) > 0 && l[0] == '[' {
			l = bytes.TrimLeft(bytes.TrimPrefix(bytes.TrimPrefix(l, []byte("[")), []byte("[")), " \t")
			stop = "]. \t"
		}
		end := bytes.IndexAny(l, stop)
		if end <= 0 {
			continue
		}
		rest := bytes.TrimLeft(l[end:], " \t")
		if len(rest) == 0 || !bytes.ContainsRune([]byte(stop), rune(rest[0])) || rest[0] == ' ' || rest[0] == '\t' {
			continue
		}
		if k := string(l[:end]); out[k] == 0 {
			out[k] = i + 1
		}
	}
	return out
}

// StoreWins is the boot config with the configuration store's
// cluster-wide sections in place of the file's, when this board keeps a
// document of the store (the store wins after the seed: docs/NOTES.md
// "Configuration store"). A kept document this board cannot take (its
// check fails here) is logged and the boot file's sections are used; one
// it cannot read is told to report as well.
func StoreWins(c *config.Config, b *Boot, log *slog.Logger, report func(store, path string, err error)) *Boot {
	path := b.StatePath("config.json")
	if path == "" {
		return b
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		if !os.IsNotExist(err) {
			report("config", path, fmt.Errorf("config: read the kept store (the boot file's sections are used): %w", err))
		}
		return b
	}
	v, ok := confstore.Kept(raw)
	if !ok {
		report("config", path, errors.New("config: the kept store does not decode (the boot file's sections are used)"))
		return b
	}
	nb, err := b.WithStore([]byte(v.Text))
	if err == nil {
		nb.StoreVersion = v.Number
		log.Info("config: cluster-wide sections from the configuration store", "version", v.Number, "path", path)
		return nb
	}
	log.Error("config: this board cannot take the configuration store's version; the boot file's sections are used", "version", v.Number, "err", err)
	return b
}

// WithStore maps the board's own sections with text, a document of the
// configuration store, in their place: what the board runs once it takes
// that version (at start, StoreWins; live, liveconfig.go). The errors are
// config's, naming the line of the whole (own sections first).
func (b *Boot) WithStore(text []byte) (*Boot, error) {
	head := append(slices.Clone(bytes.TrimRight(b.StoreOwn, "\n")), '\n') // own is shared: never append into it
	merged, err := config.Parse(b.File, append(head, text...), CheckConfig)
	if err != nil {
		return nil, err
	}
	nb, err := Map(merged)
	if err != nil {
		return nil, err
	}
	nb.StoreOwn, nb.StoreText = b.StoreOwn, text
	return nb, nil
}

// StoreWarnings is what `ews config check` says of a boot file whose
// cluster-wide sections differ from the configuration store this board
// keeps (the store wins over them); nil when it keeps none or they agree.
func StoreWarnings(c *config.Config) config.Errors {
	b := &Boot{File: c.Path, StateDir: c.Node.StateDir, Simulated: simulated(c)}
	_, b.StateDirSet = c.Lines["node.state_dir"]
	path := b.StatePath("config.json")
	if path == "" {
		return nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	v, ok := confstore.Kept(raw)
	if !ok {
		return nil
	}
	seed, _ := storeTexts(c)
	changed := confstore.Changed(seed, []byte(v.Text))
	if len(changed) == 0 {
		return nil
	}
	return config.Errors{{File: c.Path, Warning: true, Msg: fmt.Sprintf(
		"the configuration store this board keeps (version %d, %s) differs in %v: it wins over this file's; `ews config pull` shows it",
		v.Number, path, changed)}}
}

// Live is what b runs of the configuration store's sections, as the
// store's version (node/liveconf).
func (b *Boot) Live(version uint64) *liveconf.Config {
	l := &liveconf.Config{Version: version, Text: b.StoreText, HAL: b.HAL, Sched: b.Sched, Pins: map[string]string{}}
	for _, d := range b.HAL.Devices {
		l.Pins[d.Name] = d.Node
	}
	if m := b.Auto.MQTT; m != nil {
		l.MQTTUser = m.User
	}
	return l
}

// MapVersion is what text, the store's version number, maps to on this
// board, with its rules and MQTT (liveconf.Options.Map).
func (b *Boot) MapVersion(text []byte, number uint64) (*liveconf.Config, automation.Config, error) {
	nb, err := b.WithStore(text)
	if err != nil {
		return nil, automation.Config{}, err
	}
	return nb.Live(number), nb.Automation(), nil
}
