package firstrun

import (
	"encoding/base64"
	"html"
	"io"
	"net/http"
	"strings"
)

// AdminFile is the name the admin bundle downloads under, and the name the
// page's commands use for it.
const AdminFile = "admin.bundle"

// CAFile is the name the cluster CA's certificate downloads under.
const CAFile = "ca.pem"

// view is what the page shows.
type view struct {
	Written, Error, Dir, Name string
	// Boards and Domain are Start's fields, kept across an error.
	Boards, Domain string
	// Token and Admin are the new cluster's token and admin bundle, in
	// the answer to Start only.
	Token, Admin string
	// Claim fills the finish form of the answer to Start or Join (the
	// person who sent it typed it); else the form asks for it.
	Claim string
	// Secure: this answer goes over the page's HTTPS; FP is its
	// certificate's fingerprint.
	Secure bool
	FP     string
	// Board is what Start or Join set up (public data only).
	Board *setUp
	// Plan is the cluster Start made (its answer only).
	Plan *plan
	// EnrolCode and EnrolURL fill the enrolment form: from the link
	// `ews cluster enrol` prints (and shows as a QR code), ?code=&from=.
	EnrolCode, EnrolURL string
}

func (s *Server) render(w http.ResponseWriter, status int, v view) {
	v.Dir = s.opts.Dir
	v.FP = s.fp
	if v.Name == "" {
		v.Name = "ews1"
	}
	if v.Boards == "" {
		v.Boards = proposeBoards(v.Name)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, pageHTML(v))
}

// claimInput is the claim code's field.
const claimInput = `<label>The board's claim code (in <code>` + ClaimFile + `</code> on the boot partition, and on the console) <input name="claim" required autocomplete="off" spellcheck="false" placeholder="XXXX-XXXX-XXXX-XXXX"></label>`

// style is the page's CSS (inline: the CSP allows nothing else).
const style = `body{font:16px/1.45 system-ui,sans-serif;max-width:44rem;margin:2rem auto;padding:0 1rem}
fieldset,.box{border:1px solid #8886;border-radius:8px;margin:1rem 0;padding:1rem}
label{display:block;margin:.5rem 0}input,textarea{width:100%;box-sizing:border-box;font:inherit;padding:.3rem}
textarea{font-family:monospace;min-height:8rem}.err{color:#c33}code{word-break:break-all;background:#8882;padding:.1rem .3rem}
pre{white-space:pre-wrap;word-break:break-all;background:#8882;padding:.5rem}small{color:#666}`

// pageHTML writes the page for v, every value escaped (no html/template: it
// would link text/template, trimmed from the board binary for its size,
// docs/NOTES.md "Packaging and binary size").
func pageHTML(v view) string {
	e := html.EscapeString
	var b strings.Builder
	b.WriteString(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>ews: first run</title>
<style>` + style + `</style>
</head><body>
<h1>ews: this board has no config</h1>
`)
	if v.Error != "" {
		b.WriteString(`<p class="err" role="alert">` + e(v.Error) + "</p>\n")
	}
	if v.Written == "" {
		b.WriteString(pageTLS(v))
		b.WriteString(forms(v))
		b.WriteString("</body></html>\n")
		return b.String()
	}
	b.WriteString(`<p>Written: <code>` + e(v.Written) + `</code> and this board's bundle in <code>` + e(v.Dir) + "</code>.</p>\n")
	if v.Token != "" {
		b.WriteString(`<p><strong>The cluster's token, shown once:</strong> <code id="token">` + e(v.Token) + "</code> — log in with it.</p>\n")
	}
	if v.Admin != "" {
		b.WriteString(`<p><strong>The admin bundle, in this page only:</strong> <a id="admin-bundle" download="` + AdminFile + `" href="data:application/octet-stream;base64,` + base64.StdEncoding.EncodeToString([]byte(v.Admin)) + `">save it as ` + AdminFile + `</a> now, or copy it from below. The board keeps no copy: leave this page and it is gone. It holds the CA key and the firmware signing key; keep it off the boards.</p>` + "\n")
		b.WriteString(`<textarea id="admin-bundle-text" readonly>` + e(v.Admin) + "</textarea>\n")
	}
	if v.Board != nil {
		b.WriteString(caSection(v.Board))
	}
	if v.Plan != nil {
		b.WriteString(nextBoards(*v.Plan))
	}
	b.WriteString(`<form method="post" action="/firstrun/finish">`)
	if v.Claim != "" {
		b.WriteString(`<input type="hidden" name="claim" value="` + e(v.Claim) + `">`)
	} else {
		b.WriteString(claimInput)
	}
	b.WriteString(`<button id="finish" type="submit">Start the board</button></form>` + "\n")
	if v.Board != nil {
		b.WriteString(`<p>` + movesTo(v.Board) + "</p>\n")
	}
	b.WriteString("</body></html>\n")
	return b.String()
}

// forms are Start and Join.
func forms(v view) string {
	e := html.EscapeString
	return `<form method="post" action="/firstrun/start"><fieldset><legend>Start a new cluster</legend>
` + claimInput + `
<label>This board's name <input name="name" value="` + e(v.Name) + `" required pattern="[a-z0-9][a-z0-9-]{0,30}"></label>
<label>The cluster's boards, in rank order: names (<code>ews1, ews2, ews3</code>), or each with its address (<code>ews1=10.0.0.11:7946, ews2=10.0.0.12:7946</code>) <input id="boards" name="boards" value="` + e(v.Boards) + `"></label>
<p><small>The cluster's CA may certify these boards and nothing else (up to 32; this board is added first if it is not listed). With addresses, the boards run as one cluster from the start (they are <code>cluster.peers</code>); with names only, this board runs alone until each board's <code>cluster.peers</code> lists them all.</small></p>
<label>A DNS suffix only the boards use, optional (<code>ews.home.arpa</code>): the CA may also certify <code>NAME.suffix</code>, so boards you do not name now can come later <input id="domain" name="domain" value="` + e(v.Domain) + `" autocomplete="off" spellcheck="false"></label>
<p>Makes the cluster's secrets and CA here and hands you the token and the admin bundle in the answer, once.</p>
<button id="start" type="submit">Start a new cluster</button></fieldset></form>
<form method="post" action="/firstrun/join"><fieldset><legend>Join a cluster</legend>
` + claimInput + `
<label>This board's bundle (<code>ews cluster board NAME --bundle ` + AdminFile + ` --out NAME.board.bundle</code>, the file's text pasted) <textarea name="bundle" required></textarea></label>
<label>The cluster's peers, in rank order (<code>ews1=10.0.0.11:7946, ews2=10.0.0.12:7946</code>) <input name="peers"></label>
<label>This board's gossip address (default :7946) <input name="gossip"></label>
<button id="join" type="submit">Join</button></fieldset></form>
<form method="post" action="/firstrun/join"><fieldset><legend>Join with an enrolment code</legend>
` + claimInput + `
<p>On the admin's machine: <code>ews cluster enrol NAME --bundle ` + AdminFile + ` --url https://A-RUNNING-BOARD:8443</code> prints a code; the running board keeps this board's bundle, sealed under it, for an hour, and gives it out once.</p>
<label>The enrolment code <input id="enrol-code" name="enrol_code" value="` + e(v.EnrolCode) + `" required autocomplete="off" spellcheck="false"></label>
<label>The running board's URL, as the command printed it <input id="enrol-url" name="enrol_url" value="` + e(v.EnrolURL) + `" required placeholder="https://ews1.local:8443"></label>
<label>This board's gossip address (default :7946) <input name="gossip"></label>
<button id="enrol" type="submit">Join with the code</button></fieldset></form>
`
}
