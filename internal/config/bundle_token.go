package config

import "github.com/ews-firmware/ews/internal/bundle"

// fillTokenFromBundle makes cluster.bundle_file enough on its own: with
// auth = "token" and neither http.token nor http.token_file written in
// the file, the token is the bundle's (in memory only; TokenFromBundle
// says so). A bundle that cannot be read is left to Security to report.
func (c *Config) fillTokenFromBundle() {
	if c.Cluster.BundleFile == "" || c.HTTP.Auth != "token" || c.HTTP.Token != "" || c.Lines["http.token_file"] != 0 {
		return
	}
	b, err := bundle.Read(c.Cluster.BundleFile)
	if err != nil || b.Token == "" {
		return
	}
	c.HTTP.Token, c.HTTP.TokenFile, c.tokenFromBundle = b.Token, "", true
}

// TokenFromBundle reports whether http.token was taken from the bundle
// rather than written in the config (so it is no inline secret).
func (c *Config) TokenFromBundle() bool { return c.tokenFromBundle }
