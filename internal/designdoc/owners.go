package designdoc

import (
	"bufio"
	"bytes"
	"regexp"
	"strings"
)

// ownerCellRe finds the package paths written in backquotes in a row's
// first cell.
var ownerCellRe = regexp.MustCompile("`([a-z0-9_/.-]+)`")

// Owners returns the packages the table under the heading "Who owns
// what" names, in order: each row's first cell may name several, each in
// backquotes.
func Owners(design []byte) []string {
	var out []string
	in := false
	sc := bufio.NewScanner(bytes.NewReader(design))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = strings.TrimSpace(strings.TrimPrefix(line, "## ")) == "Who owns what"
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cell, _, _ := strings.Cut(strings.TrimPrefix(line, "|"), "|")
		for _, m := range ownerCellRe.FindAllStringSubmatch(cell, -1) {
			out = append(out, m[1])
		}
	}
	return out
}
