package node

import (
	"github.com/ews-firmware/ews/internal/config"
	"github.com/ews-firmware/ews/node/auth"
	"github.com/ews-firmware/ews/node/cgi"
	"github.com/ews-firmware/ews/node/health"
	"github.com/ews-firmware/ews/node/rules"
	"github.com/ews-firmware/ews/node/supervise"
)

// The node is the one mapper from the boot config to its sub-packages'
// own options (as internal/config/map_*.go is for state, sched, hal and
// vip): nothing under node/ reads the TOML sections itself.

// AuthConfig maps [http]'s credentials.
func AuthConfig(c *config.Config) auth.Config {
	return auth.Config{Mode: c.HTTP.Auth, Token: c.HTTP.Token, TokenFile: c.HTTP.TokenFile, Users: c.HTTP.Users}
}

// AuthKey is the config key an auth.New error is about.
func AuthKey(c *config.Config) string {
	switch h := c.HTTP; {
	case h.Auth == auth.ModeBasic:
		return "http.users"
	case h.Auth == auth.ModeToken && h.Token != "":
		return "http.token"
	case h.Auth == auth.ModeToken:
		return "http.token_file"
	}
	return "http.auth"
}

// cgiConfig maps [cgi].
func cgiConfig(c *config.Config) cgi.Config {
	return cgi.Config{Dir: c.CGI.Dir, Timeout: c.CGI.Timeout.Duration, MaxOutput: c.CGI.MaxOutput}
}

// healthConfig maps [[health.process]] and [[health.check]].
func healthConfig(c *config.Config) health.Config {
	var h health.Config
	for _, p := range c.Health.Processes {
		h.Processes = append(h.Processes, p.Name)
	}
	for _, k := range c.Health.Checks {
		h.Checks = append(h.Checks, health.Check{Command: k.Command, Interval: k.Interval.Duration, Timeout: k.Timeout.Duration, Runstate: k.Runstate})
	}
	return h
}

// supervised maps [[supervise]].
func supervised(c *config.Config) []supervise.Helper {
	out := make([]supervise.Helper, 0, len(c.Supervise))
	for _, s := range c.Supervise {
		out = append(out, supervise.Helper{Name: s.Name, Command: s.Command})
	}
	return out
}

// ruleList maps the checked [[rule]]s.
func ruleList(c *config.Config) []rules.Rule {
	parsed := c.ParsedRules()
	out := make([]rules.Rule, 0, len(parsed))
	for _, p := range parsed {
		r := rules.Rule{Index: p.Index, At: p.At, Then: rules.Step{
			Device: p.Then.Device, Action: p.Then.Action, Value: p.Then.Value, Pulse: p.Then.Pulse, For: p.Then.For}}
		if p.When != nil {
			r.When = &rules.Trigger{Device: p.When.Device, Event: p.When.Event, Threshold: p.When.Threshold}
		}
		out = append(out, r)
	}
	return out
}
