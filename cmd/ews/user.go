package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"
)

// cmdUser is `ews user add|list|rotate|delete`: the users API of any board
// (the board passes writes to the master), as an admin.
func cmdUser(args []string, stdout, stderr io.Writer) int {
	const help = "Manage the cluster's users through any board (an admin's token: --bundle ADMIN, --token-file F or $EWS_TOKEN; --cacert ca.pem for TLS).\n" +
		"  ews user list   --url URL [--json]\n" +
		"  ews user add    NAME --role viewer|operator|admin [--devices 'relay*,pump1'] --url URL   (prints the token once)\n" +
		"  ews user rotate NAME --url URL   (prints the new token; the old one, the password and every session end on every board)\n" +
		"  ews user delete NAME --url URL"
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fs := newFlags("user", "add|list|rotate|delete [NAME] --url URL [--token-file F]", help, stderr)
		if code, ok := parse(fs, args); !ok { // --help: 0
			return code
		}
		fmt.Fprintln(stderr, "ews user: want a subcommand: add, list, rotate or delete\n"+help)
		return exitUsage
	}
	sub, args := args[0], args[1:]
	fs := newFlags("user "+sub, "[NAME] --url URL [--bundle ADMIN | --token-file F] [--cacert ca.pem]", help, stderr)
	url := fs.String("url", "", "any board's HTTP address (required)")
	cf := addCredFlags(fs, "the admin bundle: its token, and its CA for a board with TLS on")
	role := fs.String("role", "", "add: viewer, operator or admin")
	devices := fs.String("devices", "", "add: an operator's device patterns, comma-separated (path.Match: relay*,pump1)")
	raw := fs.Bool("json", false, "print the answer's JSON as is")
	timeout := fs.Duration("timeout", 10*time.Second, "give up after this long")
	// flags may come after NAME: take NAME out first
	var name string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if code, ok := parse(fs, args); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "ews user %s: unexpected argument %q\n", sub, fs.Arg(0))
		return exitUsage
	}
	if *url == "" {
		fmt.Fprintf(stderr, "ews user %s: --url is required\n", sub)
		return exitUsage
	}
	cr, code := cf.load("user "+sub, *timeout, true, stderr)
	if code != exitOK {
		return code
	}
	var method, path string
	var body any
	switch sub {
	case "list":
		method, path = http.MethodGet, "/api/users"
	case "add":
		if *role == "" {
			fmt.Fprintln(stderr, "ews user add: --role is required (viewer, operator or admin)")
			return exitUsage
		}
		b := map[string]any{"name": name, "role": *role}
		if *devices != "" {
			b["devices"] = strings.Split(*devices, ",")
		}
		method, path, body = http.MethodPost, "/api/users", b
	case "rotate":
		method, path = http.MethodPost, "/api/users/"+name+"/rotate"
	case "delete":
		method, path = http.MethodDelete, "/api/users/"+name
	default:
		fmt.Fprintf(stderr, "ews user: unknown subcommand %q: add, list, rotate or delete\n", sub)
		return exitUsage
	}
	if sub != "list" && name == "" {
		fmt.Fprintf(stderr, "ews user %s: want a NAME\n", sub)
		return exitUsage
	}
	out, err := userCall(cr.client, *url, cr.token, method, path, body)
	if err != nil {
		fmt.Fprintf(stderr, "ews user %s: %v%s\n", sub, err, tlsHint(err))
		return exitError
	}
	if *raw {
		fmt.Fprintf(stdout, "%s\n", bytes.TrimSpace(out))
		return exitOK
	}
	var m map[string]any
	_ = json.Unmarshal(out, &m)
	switch sub {
	case "list":
		var l struct {
			Users []struct {
				Name    string   `json:"name"`
				Role    string   `json:"role"`
				Devices []string `json:"devices"`
			} `json:"users"`
		}
		_ = json.Unmarshal(out, &l)
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tROLE\tDEVICES")
		for _, u := range l.Users {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", u.Name, u.Role, strings.Join(u.Devices, ","))
		}
		tw.Flush()
	case "add", "rotate":
		if w, _ := m["warning"].(string); w != "" {
			fmt.Fprintf(stderr, "ews user %s: warning: %s\n", sub, w)
		}
		fmt.Fprintf(stderr, "ews user %s: the token of %s (shown once; keep it):\n", sub, name)
		fmt.Fprintln(stdout, m["token"])
	case "delete":
		fmt.Fprintf(stderr, "ews user delete: %s deleted\n", name)
	}
	return exitOK
}

// userCall sends one request to the users API and returns the answer's
// body, or an error with the board's message.
func userCall(client *http.Client, url, token, method, path string, body any) ([]byte, error) {
	base := boardURL(url)
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal(out, &e)
		if e.Error == "" {
			e.Error = strings.TrimSpace(string(out))
		}
		return nil, fmt.Errorf("%s %s: %s: %s", method, path, resp.Status, e.Error)
	}
	return out, nil
}
