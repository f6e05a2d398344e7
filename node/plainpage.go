package node

import (
	"html"
	"io"
	"net/http"
)

// servePlainPage is what a browser that opens a TLS board's plain port
// gets at /: the HTTPS address and why the browser may warn there, instead
// of a bare redirect into a certificate error it cannot explain. No form,
// no secret, no CA: nothing in clear is to be trusted.
func servePlainPage(w http.ResponseWriter, to string) {
	e := html.EscapeString
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	_, _ = io.WriteString(w, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>ews: over HTTPS</title>
<style>body{font:16px/1.45 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}code{background:#8882;padding:.1rem .3rem}</style>
</head><body>
<h1>This board serves its UI over HTTPS</h1>
<p><a id="https" href="`+e(to)+`">`+e(to)+`</a></p>
<p>Its certificate is from your cluster's own CA. If the browser warns that it is not trusted,
import the CA once: <code>ca.pem</code>, offered by the first-run page or made with
<code>ews cluster ca admin.bundle &gt; ca.pem</code> (docs/guide/trust-the-ca.md). If it warns that
the name does not match, open the board by its name, <code>https://NAME.local:8443/</code>.</p>
</body></html>
`)
}
