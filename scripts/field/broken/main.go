// Command broken is the field test's broken firmware: a signed arm64 build that never serves (scripts/field.sh, rollback).
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "broken: this build never serves (the field test's rollback)")
	os.Exit(1)
}
