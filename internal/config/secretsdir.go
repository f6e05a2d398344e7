package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultSecretsDir is [node] secrets_dir when absent.
const DefaultSecretsDir = "/etc/ews/secrets"

// secretFileKeys are the keys of the cluster-wide sections (the
// configuration store's, which an admin's web token may write) that name
// a file ews reads a secret from and sends elsewhere: the MQTT password
// and client key go to the broker the same config names. Such a file must
// be under [node] secrets_dir, so a config cannot point them at the card's
// bundle, keys or token (issue 50).
func (c *Config) secretFileKeys() [][2]string {
	if c.MQTT == nil {
		return nil
	}
	return [][2]string{{"mqtt.password_file", c.MQTT.PasswordFile}, {"mqtt.key_file", c.MQTT.KeyFile}}
}

// validateSecretFiles checks [node] secrets_dir and that every secret file
// key names a file under it that is none of the board's own secrets
// (cluster.bundle_file, cluster.key_file, http.token_file) nor under
// state_dir. Paths are judged after symlinks and .. are resolved.
func (c *Config) validateSecretFiles(bad func(string, string, ...any)) {
	dir := c.Node.SecretsDir
	if dir == "" || !filepath.IsAbs(dir) {
		bad("node.secrets_dir", "%q: want an absolute directory such as %q", dir, DefaultSecretsDir)
		return
	}
	secrets := resolved(dir)
	state := ""
	if c.Node.StateDir != "" && filepath.IsAbs(c.Node.StateDir) {
		state = resolved(c.Node.StateDir)
	}
	switch {
	case secrets == "/":
		bad("node.secrets_dir", "%q is the root: want a directory that holds only the secrets the configuration may name, such as %q", dir, DefaultSecretsDir)
		return
	case state != "" && (within(secrets, state) || within(state, secrets)):
		bad("node.secrets_dir", "%q overlaps node.state_dir (%s), whose files only ews may read: want a directory of its own, such as %q", dir, c.Node.StateDir, DefaultSecretsDir)
		return
	}
	own := [][2]string{{"cluster.bundle_file", c.Cluster.BundleFile}, {"cluster.key_file", c.Cluster.KeyFile}, {"http.token_file", c.HTTP.TokenFile}}
	for _, kv := range c.secretFileKeys() {
		key, p := kv[0], kv[1]
		if p == "" {
			continue
		}
		if !filepath.IsAbs(p) {
			bad(key, "%q: want an absolute path under node.secrets_dir (%s)", p, dir)
			continue
		}
		real, ok := resolvePath(p)
		if !ok {
			bad(key, "%q cannot be resolved (a .. in a path that does not exist, or a directory ews cannot read): name the file under node.secrets_dir (%s) plainly", p, dir)
			continue
		}
		if !within(real, secrets) || real == secrets {
			bad(key, "%q is not under node.secrets_dir (%s): a secret the configuration names is read only from there; put the file there (or set [node] secrets_dir in this board's boot file)", p, dir)
			continue
		}
		if state != "" && within(real, state) {
			bad(key, "%q is under node.state_dir (%s), which holds the board's own secrets", p, c.Node.StateDir)
			continue
		}
		for _, o := range own {
			if o[1] != "" && filepath.IsAbs(o[1]) && resolved(o[1]) == real {
				bad(key, "%q is this board's %s: its secrets never leave it", p, o[0])
				break
			}
		}
	}
}

// resolvePath is abs (absolute) with every symlink and .. resolved as the
// kernel would: filepath.EvalSymlinks where the file exists; otherwise the
// deepest ancestor that exists, resolved, with the rest cleaned onto it,
// so a file not there yet is judged where it would be. A path that does
// not exist and has a .. in it cannot be judged that way (a .. after a
// link is not a lexical step back): ok is false.
func resolvePath(abs string) (real string, ok bool) {
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r, true
	}
	if slices.Contains(strings.Split(filepath.ToSlash(abs), "/"), "..") {
		return filepath.Clean(abs), false
	}
	p := filepath.Clean(abs)
	var rest []string
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(append([]string{r}, rest...)...), true
		} else if !os.IsNotExist(err) {
			return filepath.Clean(abs), false // unreadable: not judged
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Clean(abs), true
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
}

// resolved is resolvePath's path, for the board's own paths (judged as
// written when they cannot be resolved).
func resolved(abs string) string {
	r, _ := resolvePath(abs)
	return r
}

// within reports whether path is dir or below it (both resolved).
func within(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}
