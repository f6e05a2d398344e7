package config

import (
	"fmt"
	"net"
	"regexp"
	"strings"
)

var nameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.\-]{0,62}$`)

// Validate checks every rule the file alone can break and returns each
// problem with its line; nil when none. What the packages the config is
// mapped onto know (policies, drivers, the rule grammar, the virtual IP)
// they check themselves: the Check that Parse runs (bootconf.CheckConfig).
func (c *Config) Validate() Errors {
	var errs Errors
	bad := func(key, format string, args ...any) { errs = append(errs, c.Errorf(key, format, args...)) }

	if !nameRe.MatchString(c.Node.Name) {
		bad("node.name", "%q is not a board name (letters, digits, - _ . ; up to 63)", c.Node.Name)
	}
	if c.Node.Capacity < 1 {
		bad("node.capacity", "must be at least 1, got %d", c.Node.Capacity)
	}
	if c.Node.Weight < 0 {
		bad("node.weight", "must not be negative, got %d", c.Node.Weight)
	}
	for _, a := range [][2]string{{"node.http", c.Node.HTTP}, {"node.gossip", c.Node.Gossip}} {
		if _, _, err := net.SplitHostPort(a[1]); err != nil {
			bad(a[0], "%q is not host:port: %v", a[1], err)
		}
	}

	c.validateBoard(bad)
	c.validateCluster(bad)
	c.validateVIP(bad)
	c.validateSched(bad)
	c.validateHTTP(bad)
	c.validateTLS(bad)
	c.validateDevices(bad)
	c.validateSim(bad)
	c.validateHistory(bad)
	for i, h := range c.Health.Processes {
		if strings.TrimSpace(h.Name) == "" {
			bad(fmt.Sprintf("health.process[%d].name", i), "empty process name")
		}
	}
	for i, h := range c.Health.Checks {
		if strings.TrimSpace(h.Command) == "" {
			bad(fmt.Sprintf("health.check[%d].command", i), "empty command")
		}
		if h.Runstate != "down" && h.Runstate != "overloaded" {
			bad(fmt.Sprintf("health.check[%d].runstate", i), "%q: want down or overloaded", h.Runstate)
		}
	}
	for i, s := range c.Supervise {
		if len(s.Command) == 0 || s.Command[0] == "" {
			bad(fmt.Sprintf("supervise[%d].command", i), "empty command")
		}
	}
	c.validateSuperviseNames(bad)
	c.validateMQTT(bad)
	c.validateSecretFiles(bad)
	c.validateCGI(bad)
	c.validateRules(bad)
	if len(errs) == 0 {
		return nil
	}
	return errs
}

func (c *Config) validateHTTP(bad func(string, string, ...any)) {
	h := c.HTTP
	switch h.Auth {
	case "none":
	case "token":
		if h.Token == "" && h.TokenFile == "" && !c.tokenFromBundle {
			bad("http.token_file", "auth = \"token\" needs token_file or token")
		}
	case "basic":
		if len(h.Users) == 0 {
			bad("http.users", "auth = \"basic\" needs users = [\"name:$2a$...bcrypt\"]")
		}
		for _, u := range h.Users {
			name, hash, ok := strings.Cut(u, ":")
			if !ok || name == "" || !strings.HasPrefix(hash, "$2") {
				bad("http.users", "%q: want \"name:<bcrypt hash>\"", redact(u))
			}
		}
	default:
		bad("http.auth", "%q: want token, basic or none", h.Auth)
	}
	if h.MaxBody < 0 {
		bad("http.max_body", "must not be negative")
	}
	if h.SSEClients < 0 {
		bad("http.sse_clients", "must not be negative (0: the default, 64)")
	}
	if h.SSEPerClient < 0 {
		bad("http.sse_per_client", "must not be negative (0: the default, 8)")
	}
	if h.MaxConnsPerClient < 0 {
		bad("http.max_conns_per_client", "must not be negative (0: the default, 256)")
	}
}

func redact(u string) string {
	name, _, _ := strings.Cut(u, ":")
	return name + ":…"
}
