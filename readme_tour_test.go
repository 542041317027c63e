package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// tourFixtures are the files the README's tour names as the user's own.
const tourFixtures = `-- prompt.txt --
What is the order cache made of?
-- notes.jsonl --
{"content":"Deploys go through the staging cluster first","category":"constraint","source":"user_explicit"}
{"content":"The report API p99 is 4 s; an index on orders.created_at fixes it","category":"incident"}
`

// tourLines returns the command lines of the README's tour: the indented
// block under "## A tour", comments and blank lines left out.
func tourLines(readme string) ([]string, error) {
	_, rest, ok := strings.Cut(readme, "\n## A tour\n")
	if !ok {
		return nil, fmt.Errorf(`README.md has no "## A tour" section`)
	}
	var lines []string
	started := false
	for _, l := range strings.Split(rest, "\n") {
		switch {
		case strings.HasPrefix(l, "    "):
			started = true
			if c := strings.TrimSpace(l); !strings.HasPrefix(c, "#") {
				lines = append(lines, c)
			}
		case strings.TrimSpace(l) == "":
		case started:
			return lines, nil
		}
	}
	return lines, nil
}

// TestReadmeTour runs the README's tour as written, command by command, on
// a fresh memory (issue 12: a tour that runs as written). Each line must
// exit 0; the README and this test cannot drift apart.
func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end scenarios skipped in -short mode")
	}
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines, err := tourLines(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) < 20 {
		t.Fatalf("the tour has only %d commands", len(lines))
	}
	var script strings.Builder
	script.WriteString("env HOME=$WORK\n")
	for _, l := range lines {
		if v, ok := strings.CutPrefix(l, "export "); ok {
			v, _, _ = strings.Cut(v, "#")
			script.WriteString("env " + strings.ReplaceAll(strings.TrimSpace(v), "~", "$WORK") + "\n")
			continue
		}
		script.WriteString("exec sh -c '" + strings.ReplaceAll(l, "'", "''") + "'\n")
	}
	script.WriteString(tourFixtures)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "tour.txtar"), []byte(script.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		Setup:               scriptSetup,
	})
}
