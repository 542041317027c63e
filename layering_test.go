package main

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestLayering enforces the design card's rules on imports (non-test
// files): only mdmem imports goldmark and go-git; only consolidate imports
// go-openai; mdmem imports none of consolidate, inject or cmd; consolidate
// and inject do not import cmd, and neither imports the other.
func TestLayering(t *testing.T) {
	const mod = "github.com/memctl/memctl/"
	rules := []struct {
		importPrefix string
		allowedIn    func(pkg string) bool
	}{
		{"github.com/yuin/goldmark", func(p string) bool { return p == "mdmem" }},
		{"github.com/go-git/", func(p string) bool { return strings.HasPrefix(p, "mdmem") }},
		{"github.com/sashabaranov/go-openai", func(p string) bool { return p == "consolidate" }},
		{mod + "cmd", func(p string) bool { return p == "." }},
		{mod + "consolidate", func(p string) bool {
			return p == "cmd" || p == "." || p == "consolidate" || strings.HasPrefix(p, "consolidate/")
		}}, // consolidate may use its own sub-packages
		// consolidate declares what it needs of inject (Measure, Retrieval,
		// VectorCache) and cmd gives inject's: it does not import inject.
		{mod + "inject", func(p string) bool { return p == "cmd" || strings.HasPrefix(p, "inject/") }},
	}
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".") && path != ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(path))
		for _, imp := range f.Imports {
			ip, _ := strconv.Unquote(imp.Path.Value)
			for _, r := range rules {
				if strings.HasPrefix(ip, r.importPrefix) && !r.allowedIn(pkg) {
					t.Errorf("%s imports %s: package %s may not (see the design card)", path, ip, pkg)
				}
			}
		}
		checked++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 30 {
		t.Fatalf("only %d files checked", checked)
	}
}
