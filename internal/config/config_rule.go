package config

// Rule is one [[rule]] as written: an automation the master runs. The
// grammar of its strings (when = "DEVICE EVENT", at = "HH:MM",
// then = "DEVICE ACTION [ARG] [for DURATION]") is node/rules', which
// parses and checks them against the devices; config keeps the text.
type Rule struct {
	When string `toml:"when"`
	At   string `toml:"at"`
	Then string `toml:"then"`
}

// validateRules checks what the rules need of the rest of the file.
func (c *Config) validateRules(bad func(string, string, ...any)) {
	if len(c.Rules) > 0 && c.HTTP.Auth == "basic" {
		bad("rule[0]", "rules run with the cluster's token: they need http.auth = \"token\" or \"none\", not basic")
	}
}
