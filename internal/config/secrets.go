package config

import (
	"fmt"
	"os"
	"strings"
)

// ServiceGroup is the group the packaged service runs as: a secret file
// readable by this group only (/etc/ews/token is 0640 root:ews) is as
// intended, not a warning.
const ServiceGroup = "ews"

// CheckSecrets reads the files that hold this board's secrets the way
// `ews run` does, so that `ews config check` reports what run would refuse.
// errs: a token_file (auth = "token" with no inline token) or key_file that
// cannot be read (Err holds the cause), is empty, or holds a bad key. warns: such a file that
// others, or a group other than ServiceGroup, can read.
func (c *Config) CheckSecrets() (errs, warns Errors) {
	if c.HTTP.Auth == "token" && c.HTTP.Token == "" && c.HTTP.TokenFile != "" {
		b, err := os.ReadFile(c.HTTP.TokenFile)
		switch {
		case err != nil:
			if c.Lines["http.token_file"] == 0 {
				err = fmt.Errorf("%w (token_file is not set, so the default; set token_file, token, or auth = \"none\")", err)
			}
			e := c.Errorf("http.token_file", "cannot read the token: %v", err)
			e.Err = err
			errs = append(errs, e)
		case strings.TrimSpace(string(b)) == "":
			errs = append(errs, c.Errorf("http.token_file", "%s is empty: put the bearer token in it", c.HTTP.TokenFile))
		default:
			warns = c.warnReadable(warns, "http.token_file", c.HTTP.TokenFile)
		}
	}
	errs, warns = c.checkMQTTSecret(errs, warns)
	errs, warns = c.checkCGIUser(errs, warns)
	if c.Cluster.Key == "" && c.Cluster.KeyFile != "" {
		errs, warns = c.checkSecretFile(errs, warns, "cluster.key_file", c.Cluster.KeyFile, "key", func() error { _, err := c.ClusterKey(); return err })
	}
	if c.Cluster.BundleFile != "" {
		errs, warns = c.checkSecretFile(errs, warns, "cluster.bundle_file", c.Cluster.BundleFile, "the bundle", func() error { _, err := c.Security(); return err })
	}
	return errs, warns
}

// warnReadable adds a warning when the secret file at path can be read by
// others, or by a group other than ServiceGroup.
func (c *Config) warnReadable(warns Errors, key, path string) Errors {
	fi, err := os.Stat(path)
	if err != nil {
		return warns
	}
	perm := fi.Mode().Perm()
	switch {
	case perm&0o004 != 0:
		return append(warns, c.warnf(key, "%s is readable by others (mode %04o): chmod 600 %s", path, perm, path))
	case perm&0o040 != 0 && groupName(fi) != ServiceGroup:
		return append(warns, c.warnf(key, "%s is readable by group %s (mode %04o): chmod 600 %s, or give it to group %s", path, groupName(fi), perm, path, ServiceGroup))
	}
	return warns
}

func (c *Config) warnf(key, format string, args ...any) *Error {
	e := c.Errorf(key, format, args...)
	e.Warning = true
	return e
}

// asError keeps an *Error as it is and wraps anything else at key.
func asError(c *Config, key string, err error) *Error {
	if e, ok := err.(*Error); ok {
		return e
	}
	return c.Errorf(key, "%v", err)
}

// checkSecretFile checks the secret file at path, named by key: an error
// when it cannot be read (what names its content) or take refuses it, a
// warning when others may read it (warnReadable).
func (c *Config) checkSecretFile(errs, warns Errors, key, path, what string, take func() error) (Errors, Errors) {
	if _, err := os.Stat(path); err != nil {
		e := c.Errorf(key, "cannot read %s: %v", what, err)
		e.Err = err
		return append(errs, e), warns
	}
	if err := take(); err != nil {
		return append(errs, asError(c, key, err)), warns
	}
	return errs, c.warnReadable(warns, key, path)
}
