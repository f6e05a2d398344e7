package designdoc

import (
	"bufio"
	"bytes"
	"fmt"
	"go/scanner"
	"go/token"
	"regexp"
	"strconv"
	"strings"
)

// Citation is one place a Go file cites the design.
type Citation struct {
	Line      int
	Invariant int  // the invariant's number; 0 for a citation of the file
	Bare      bool // a "DESIGN.md" not written as "docs/DESIGN.md"
}

var (
	// invariantRe matches "invariant N", "invariants N and M", "invariants N, M or K".
	invariantRe = regexp.MustCompile(`(?i)\binvariants?\s+(\d+(?:(?:\s*,\s*|\s+and\s+|\s+or\s+)\d+)*)`)
	numberRe    = regexp.MustCompile(`\d+`)
	fileRe      = regexp.MustCompile(`(docs/)?DESIGN\.md`)
)

// Citations returns the design citations in the comments and string
// literals of one Go source file. Adjacent line comments are read as one
// text, so a citation wrapped over two lines is still found.
func Citations(name string, src []byte) ([]Citation, error) {
	fset := token.NewFileSet()
	file := fset.AddFile(name, -1, len(src))
	var errs scanner.ErrorList
	var s scanner.Scanner
	s.Init(file, src, func(pos token.Position, msg string) { errs.Add(pos, msg) }, scanner.ScanComments)
	var out []Citation
	var group []string // the current run of adjacent comments, markers stripped
	groupLine, lastLine := 0, 0
	flush := func() {
		if len(group) > 0 {
			out = append(out, find(strings.Join(group, "\n"), groupLine, true)...)
		}
		group = group[:0]
	}
	for {
		pos, tok, lit := s.Scan()
		if tok == token.EOF {
			break
		}
		line := fset.Position(pos).Line
		switch {
		case tok == token.COMMENT:
			if len(group) == 0 || line > lastLine+1 {
				flush()
				groupLine = line
			}
			group = append(group, stripMarkers(lit))
			lastLine = line + strings.Count(lit, "\n")
		case tok == token.SEMICOLON && lit == "\n":
			// an inserted semicolon: the comment run goes on
		default:
			flush()
			if tok == token.STRING {
				out = append(out, find(lit, line, false)...)
			}
		}
	}
	flush()
	if errs.Len() > 0 {
		return out, fmt.Errorf("designdoc: scan %s: %w", name, errs.Err())
	}
	return out, nil
}

// stripMarkers removes a comment's // or /* */.
func stripMarkers(c string) string {
	if rest, ok := strings.CutPrefix(c, "//"); ok {
		return rest
	}
	return strings.TrimSuffix(strings.TrimPrefix(c, "/*"), "*/")
}

// find returns the citations in text, which starts on line; bare
// DESIGN.md citations count only in comments.
func find(text string, line int, comment bool) []Citation {
	lineOf := func(off int) int { return line + strings.Count(text[:off], "\n") }
	var out []Citation
	for _, m := range invariantRe.FindAllStringSubmatchIndex(text, -1) {
		for _, n := range numberRe.FindAllString(text[m[2]:m[3]], -1) {
			v, _ := strconv.Atoi(n)
			out = append(out, Citation{Line: lineOf(m[0]), Invariant: v})
		}
	}
	if comment {
		for _, m := range fileRe.FindAllStringSubmatchIndex(text, -1) {
			if m[2] < 0 {
				out = append(out, Citation{Line: lineOf(m[0]), Bare: true})
			}
		}
	}
	return out
}

// headingRe finds the section of the numbered invariants.
var headingRe = regexp.MustCompile(`(?i)^#+ .*invariants`)

// itemRe is one numbered item: "3. A board's own ...".
var itemRe = regexp.MustCompile(`^(\d+)\.\s`)

// Invariants returns the numbers of the invariants a design document
// defines: the numbered items of its first section whose heading names
// invariants, in order.
func Invariants(doc []byte) []int {
	var nums []int
	in := false
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			if in {
				break
			}
			in = headingRe.MatchString(line)
			continue
		}
		if !in {
			continue
		}
		if m := itemRe.FindStringSubmatch(line); m != nil {
			v, _ := strconv.Atoi(m[1])
			nums = append(nums, v)
		}
	}
	return nums
}
