package bootconf

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ews-firmware/ews/hal"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/confstore"
	"github.com/ews-firmware/ews/vip"
	"github.com/pelletier/go-toml/v2"
)

// CheckConfig runs the validation of the packages the config maps onto
// (the scheduler's policies and rules, hal's drivers and device keys,
// the virtual IP, the [[rule]] grammar; in the lite build, the features it
// leaves out) and returns each problem with the
// file, line and key it is about, in line order; nil when they take the
// config. It is a config.Check: `ews config check` and `ews run` hand it
// to config.Load, which runs it with config's own Validate under one rule
// (a value the file's shape check refused is judged once), and New runs
// it before mapping.
func CheckConfig(c *config.Config) config.Errors {
	var errs config.Errors
	for _, e := range schedConfig(c).Validate() {
		errs = append(errs, c.Errorf("sched."+e.Field, "%v", e.Err))
	}
	for _, e := range hal.CheckSpecs(c.Node.Name, deviceSpecs(c)) {
		errs = append(errs, deviceError(c, e))
	}
	if c.Cluster.VIP != "" {
		p, err := vip.ParsePrefix(c.Cluster.VIP)
		if err != nil {
			errs = append(errs, c.Errorf("cluster.vip", "%s", strings.TrimPrefix(err.Error(), "vip: ")))
		}
		if p.IsValid() { // an address, if a refused one: its interface is judged too
			if err := vip.CheckInterface(c.Cluster.VIPInterface); err != nil {
				errs = append(errs, c.Errorf("cluster.vip_interface", "%s", strings.TrimPrefix(err.Error(), "vip: ")))
			}
		}
	}
	_, rerrs := parseRules(c)
	errs = append(errs, rerrs...)
	errs = append(errs, leftOut(c)...) // the lite build's refusals (leftout_lite.go)
	if len(errs) == 0 {
		return nil
	}
	errs.Sort()
	return errs
}

// HardwareWarnings are hal.Preflight's findings on this machine (root "/")
// as warnings with the device's line: kernel interfaces or groups the
// board's devices need and this machine lacks.
func HardwareWarnings(c *config.Config) config.Errors {
	var out config.Errors
	for _, e := range hal.Preflight(halConfig(c), "/") {
		w := deviceError(c, e)
		w.Warning = true
		out = append(out, w)
	}
	return out
}

// deviceErrors puts file:line and the key path in front of each of hal's
// errors about a device (hal.New's, hal.CheckSpecs'); it returns
// config.Errors, or err as it is when it holds none.
func deviceErrors(c *config.Config, err error) error {
	var hs hal.SpecErrors
	if !errors.As(err, &hs) {
		var one *hal.SpecError
		if !errors.As(err, &one) {
			return err
		}
		hs = hal.SpecErrors{one}
	}
	errs := make(config.Errors, 0, len(hs))
	for _, e := range hs {
		errs = append(errs, deviceError(c, e))
	}
	return errs
}

func deviceError(c *config.Config, e *hal.SpecError) *config.Error {
	if e.Index < 0 || e.Index >= len(c.Devices) {
		return &config.Error{File: c.Path, Msg: e.Error()}
	}
	return c.Errorf(fmt.Sprintf("device[%d].%s", e.Index, e.Key), "device %q: %v", e.Device, e.Err)
}

// CheckStoreText checks a configuration store document as a board whose
// boot config is boot would (`ews config check`, PUT /api/config): `ews
// cluster restore` runs it before it changes anything. Only the
// document's problems: not warnings, nor those of the boot config's own
// sections (a backup without --secrets has its key left out).
func CheckStoreText(text, boot []byte) []string {
	var doc map[string]any
	_ = toml.Unmarshal(boot, &doc)
	_, own := splitSections(doc)
	var out []string
	for _, p := range CheckStore(own)(text) {
		section, _, _ := strings.Cut(p.Key, ".")
		section, _, _ = strings.Cut(section, "[")
		if p.Warning || p.Line == 0 && section != "" && !slices.Contains(confstore.Sections, section) {
			continue
		}
		out = append(out, p.Text)
	}
	return out
}
