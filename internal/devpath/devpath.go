// Package devpath names the device an HTTP request operates on, from the API's contract.
package devpath

import "strings"

// Of names the device a request operates on: POST
// /api/devices/{name}/{action} with one of the API's actions; read says
// the action is a read (reads share one device read). "" for any other
// request (a GET of a device's state does not touch the device). path is
// the URL's path, without its query.
func Of(method, path string) (name string, read bool) {
	if method != "POST" {
		return "", false
	}
	rest, ok := strings.CutPrefix(path, "/api/devices/")
	if !ok {
		return "", false
	}
	name, action, ok := strings.Cut(rest, "/")
	if !ok || name == "" {
		return "", false
	}
	switch action {
	case "read":
		return name, true
	case "turn_on", "turn_off", "toggle", "set", "pulse":
		return name, false
	}
	return "", false
}
