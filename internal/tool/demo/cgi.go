package demo

import (
	"fmt"
	"os"
	"path/filepath"
)

// uptimeCGI is the demo's CGI program: a real script run by /cgi-bin/uptime.
const uptimeCGI = `#!/bin/sh
# A CGI program: prints this board's uptime and the devices ews passed in.
printf 'Content-Type: application/json\r\n\r\n'
up=$(cut -d' ' -f1 /proc/uptime 2>/dev/null || echo 0)
printf '{"board":"%s","uptime_s":%s,"devices":%s}\n' "${EWS_NODE:-unknown}" "$up" "${EWS_DEVICES:-[]}"
`

func writeCGI(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "uptime"), []byte(uptimeCGI), 0o755); err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	return nil
}
