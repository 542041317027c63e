package consolidate

import (
	"fmt"
	"sort"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// UnifiedDiff renders the changes from old to new files as a unified diff
// with two lines of context ("a/" and "b/" paths like git).
func UnifiedDiff(old func(path string) []byte, files map[string][]byte) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		a := string(old(p))
		n := string(files[p])
		if a == n {
			continue
		}
		from := "a/" + p
		if a == "" {
			from = "/dev/null"
		}
		fmt.Fprintf(&b, "--- %s\n+++ b/%s\n", from, p)
		writeHunks(&b, a, n)
	}
	return b.String()
}

type dline struct {
	op   byte // ' ', '-', '+'
	text string
}

func writeHunks(b *strings.Builder, a, n string) {
	dmp := diffmatchpatch.New()
	ca, cb, arr := dmp.DiffLinesToChars(a, n)
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), arr)
	var lines []dline
	for _, d := range diffs {
		op := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = '-'
		case diffmatchpatch.DiffInsert:
			op = '+'
		}
		text := d.Text
		for text != "" {
			i := strings.IndexByte(text, '\n')
			var l string
			if i < 0 {
				l, text = text+"\n\\ No newline at end of file", ""
			} else {
				l, text = text[:i], text[i+1:]
			}
			lines = append(lines, dline{op, l})
		}
	}
	const ctx = 2
	for i := 0; i < len(lines); {
		if lines[i].op == ' ' {
			i++
			continue
		}
		start := max(i-ctx, 0)
		end := i
		for end < len(lines) {
			if lines[end].op != ' ' {
				end++
				continue
			}
			run := end
			for run < len(lines) && lines[run].op == ' ' {
				run++
			}
			if run-end > 2*ctx || run == len(lines) {
				end = min(end+ctx, len(lines))
				break
			}
			end = run
		}
		aStart, bStart := 1, 1
		for _, l := range lines[:start] {
			if l.op != '+' {
				aStart++
			}
			if l.op != '-' {
				bStart++
			}
		}
		aN, bN := 0, 0
		for _, l := range lines[start:end] {
			if l.op != '+' {
				aN++
			}
			if l.op != '-' {
				bN++
			}
		}
		fmt.Fprintf(b, "@@ -%d,%d +%d,%d @@\n", aStart, aN, bStart, bN)
		for _, l := range lines[start:end] {
			b.WriteByte(l.op)
			b.WriteString(l.text)
			b.WriteByte('\n')
		}
		i = end
	}
}
