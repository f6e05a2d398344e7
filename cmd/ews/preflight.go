package main

import (
	"errors"
	"io/fs"
	"net/http"

	"github.com/ews-firmware/ews/internal/bootkey"
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/bootconf"
)

// preflight is every check of a parsed config beyond the file itself that
// that `ews run` makes before it starts: `config check` and `run` both call
// it, so what run refuses, check reports. errs stop the board; warns do not.
func preflight(cfg *config.Config) (errs, warns config.Errors) {
	errs, warns = cfg.CheckSecrets()
	if len(errs) == 0 {
		// The credentials as node.New builds them: a bcrypt hash it cannot
		// read is refused here too, with the line.
		opts := auth.Options{}
		if cfg.TokenFromBundle() && cfg.HTTP.Token == "" {
			// a board bundle without a token: the board credential
			// stands for it (node, boardcred.go)
			opts.FromBoard, opts.BoardToken = func(*http.Request) bool { return false }, "ewsb_preflight"
		}
		if _, err := auth.New(bootconf.AuthConfig(cfg), opts); err != nil {
			errs = append(errs, cfg.Errorf(bootconf.AuthKey(cfg), "%v", err))
		}
	}
	// kernel interfaces the devices need (pwmchip, w1, i2c, GPIO): warned,
	// since check often runs off the board; run then fails naming the device
	warns = append(warns, bootconf.HardwareWarnings(cfg)...)
	// a token inline on the FAT boot partition is readable by every local
	// user; run moves it (bootkey.MigrateToken), check says so
	// (one from bundle_file is not inline)
	if cfg.HTTP.Token != "" && !cfg.TokenFromBundle() && bootkey.OnBoot(cfg.Path) {
		w := cfg.Errorf("http.token", "inline on the boot partition (FAT: readable by every local user and anyone with the SD card); ews moves it to %s at start, or put it there yourself and set token_file", bootkey.DefaultTokenFile)
		w.Warning = true
		warns = append(warns, w)
	}
	errs.Sort()
	warns.Sort()
	return errs, warns
}

// checkAll is what `config check` reports: every problem of the file (its
// own and those of the packages it maps onto: bootconf.CheckConfig), then of
// the preflight, in line order, a key reported once. Everything run refuses is here; a
// secret file missing on this machine as a warning.
func checkAll(path string) (cfg *config.Config, errs, warns config.Errors) {
	cfg, errs = config.LoadAll(path, bootconf.CheckConfig)
	if cfg == nil {
		return nil, errs, nil
	}
	perrs, warns := preflight(cfg)
	seen := map[string]bool{}
	for _, e := range errs {
		seen[e.Key] = true
	}
	for _, e := range perrs {
		switch {
		case seen[e.Key]:
		case offBoard(e):
			w := *e
			w.Warning = true
			w.Msg += "; ews run refuses to start until it can read it"
			warns = append(warns, &w)
		default:
			errs = append(errs, e)
		}
	}
	warns = append(warns, bootconf.StoreWarnings(cfg)...) // the store wins over the file's cluster-wide sections
	errs.Sort()
	warns.Sort()
	return cfg, errs, warns
}

// offBoard reports a secret file that is not there, or not readable by
// this user: check often runs on the machine that writes the SD card
// (flash.sh), where the board's /etc/ews is not, so it warns; run, on the
// board, refuses.
func offBoard(e *config.Error) bool {
	return errors.Is(e, fs.ErrNotExist) || errors.Is(e, fs.ErrPermission)
}
