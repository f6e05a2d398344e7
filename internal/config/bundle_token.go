package config

import "github.com/ews-firmware/ews/internal/bundle"

// fillTokenFromBundle makes cluster.bundle_file enough on its own: with
// auth = "token" and neither http.token nor http.token_file written in
// the file, the token is the bundle's (in memory only; TokenFromBundle
// says so). A board bundle minted by this build carries no token (a card
// is no admin, docs/NOTES.md "Security"): then no token is needed at all,
// the board's credential comes from the gossip key and people's from the
// users store (node). A bundle that cannot be read is left to Security to
// report.
func (c *Config) fillTokenFromBundle() {
	if c.Cluster.BundleFile == "" || c.HTTP.Auth != "token" || c.HTTP.Token != "" || c.Lines["http.token_file"] != 0 {
		return
	}
	b, err := bundle.Read(c.Cluster.BundleFile)
	if err != nil {
		return
	}
	if b.Token == "" {
		if b.IsBoard() {
			c.HTTP.TokenFile, c.tokenFromBundle = "", true
		}
		return
	}
	c.HTTP.Token, c.HTTP.TokenFile, c.tokenFromBundle = b.Token, "", true
}

// TokenFromBundle reports whether http.token was taken from the bundle
// rather than written in the config (so it is no inline secret); with an
// empty http.token, the bundle is a board bundle without one.
func (c *Config) TokenFromBundle() bool { return c.tokenFromBundle }
