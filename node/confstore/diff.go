package confstore

import (
	"reflect"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Changed lists the sections (of Sections) whose values differ between
// two documents; a document that does not parse counts as every section
// changed.
func Changed(old, cur []byte) []string {
	var a, b map[string]any
	errA, errB := toml.Unmarshal(old, &a), toml.Unmarshal(cur, &b)
	var out []string
	for _, s := range Sections {
		if errA != nil || errB != nil || !reflect.DeepEqual(a[s], b[s]) {
			out = append(out, s)
		}
	}
	return out
}

// maxDiffLines bounds the work of Diff (a quadratic table over the lines
// between the common head and tail: 500 lines are 2 MB on a 64-bit
// board); a longer changed middle is shown whole, old then new.
const maxDiffLines = 500

// Diff is a line diff of two texts: lines only in a prefixed "-", only
// in b "+", common ones " ", one per line.
func Diff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out strings.Builder
	line := func(p, s string) { out.WriteString(p); out.WriteString(s); out.WriteByte('\n') }
	head := 0 // the common head and tail cost no table
	for head < len(x) && head < len(y) && x[head] == y[head] {
		line(" ", x[head])
		head++
	}
	tail := 0
	for tail < len(x)-head && tail < len(y)-head && x[len(x)-1-tail] == y[len(y)-1-tail] {
		tail++
	}
	common := x[len(x)-tail:]
	middle(x[head:len(x)-tail], y[head:len(y)-tail], line)
	for _, s := range common {
		line(" ", s)
	}
	return out.String()
}

// middle writes the diff of x and y, which differ at both ends.
func middle(x, y []string, line func(p, s string)) {
	if len(x) > maxDiffLines || len(y) > maxDiffLines {
		for _, s := range x {
			line("-", s)
		}
		for _, s := range y {
			line("+", s)
		}
		return
	}
	// lcs[i][j]: the longest common subsequence of x[i:] and y[j:]
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i] == y[j]:
			line(" ", x[i])
			i, j = i+1, j+1
		case lcs[i+1][j] >= lcs[i][j+1]:
			line("-", x[i])
			i++
		default:
			line("+", y[j])
			j++
		}
	}
	for ; i < len(x); i++ {
		line("-", x[i])
	}
	for ; j < len(y); j++ {
		line("+", y[j])
	}
}
