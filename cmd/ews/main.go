// Command ews is the firmware of an ews board: run the node, a demo cluster, benchmarks and config checks.
package main

import (
	"os"
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
}
