/*
 * This program and the accompanying materials
 * are made available under the terms of the Eclipse Public License v2.0
 * and Eclipse Distribution License v1.0 which accompany this distribution.
 *
 * The Eclipse Public License is available at
 *    https://www.eclipse.org/legal/epl-2.0/
 * and the Eclipse Distribution License is available at
 *   http://www.eclipse.org/org/documents/edl-v10.php.
 *
 * Contributors:
 */

package mqtt

// ews's copy of paho has no websocket transport: ews connects to brokers over TCP or TLS with its
// own dialer (node/mqtt, SetCustomOpenConnectionFn), and gorilla/websocket with golang.org/x/net's
// proxy cost its boards ~0.1 MB (issue 27 part 4). ws:// and wss:// brokers get this error.

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"net/url"
	"time"
)

// WebsocketOptions are config options for a websocket dialer
type WebsocketOptions struct {
	ReadBufferSize  int
	WriteBufferSize int
	Proxy           ProxyFunction
}

type ProxyFunction func(req *http.Request) (*url.URL, error)

// NewWebsocket fails: ews's copy of paho has no websocket transport.
func NewWebsocket(host string, tlsc *tls.Config, timeout time.Duration, requestHeader http.Header, options *WebsocketOptions) (net.Conn, error) {
	return nil, errors.New("mqtt: websocket brokers are not supported by this build (ews's copy of paho)")
}
