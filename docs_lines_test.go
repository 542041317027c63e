package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestOneMCPRegistrationLine: every `claude mcp add` the docs and help
// texts show registers the server the one way that works from every
// project and an IDE: user scope, an absolute binary, an absolute --dir.
func TestOneMCPRegistrationLine(t *testing.T) {
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	more, err := filepath.Glob("cmd/*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(append(files, "README.md"), more...)
	want := regexp.MustCompile(`claude mcp add --scope user memctl -- (/\S+/memctl|%s|" \+ shellQuote\(self\) \+ ") --dir (/\S+|%s|" \+ shellQuote\(dir\) \+ ") mcp\b`)
	seen := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if !strings.Contains(line, "claude mcp add ") {
				continue
			}
			seen++
			if !want.MatchString(line) {
				t.Errorf("%s:%d: %s\n\twant claude mcp add --scope user memctl -- /abs/memctl --dir /abs/memory mcp", f, i+1, strings.TrimSpace(line))
			}
		}
	}
	if seen < 3 {
		t.Errorf("found %d registration lines; the docs lost them", seen)
	}
}
