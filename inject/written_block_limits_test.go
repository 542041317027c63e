package inject

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/memctl/memctl/mdmem"
)

// TestTooLargeHintNeverSendsTheArchiveToTopics: every entry of a topic
// file is live (injected), whatever heading it sits under, so the hint for
// a MEMORY.md over its size limit must not advise moving the archive
// there; before, it did ("the archive is the usual bulk"), and a person
// who followed it had rejected and removed entries injected again.
func TestTooLargeHintNeverSendsTheArchiveToTopics(t *testing.T) {
	h := (&mdmem.FileTooLargeError{Path: mdmem.MainFile}).Hint()
	if strings.Contains(h, "archive is the usual bulk") || !strings.Contains(h, "never move the archive into topics/") {
		t.Errorf("hint %q", h)
	}
}

// TestWrittenBlockStaysWithinBudgetAndMaxChars: inject --write puts
// res.Block between the markers, but ReplaceBlock first rewrites every
// "<!-- memctl:" in it to "<!-- (quoted) memctl:" — after Inject measured
// the block. A stored entry that mentions memctl's own markers (a note
// about AGENTS.md, or hostile text) so makes the block in the file longer
// than --max-chars and --budget allow ("The whole printed block ... never
// exceeds --budget tokens, nor --max-chars characters"; INJECT.md: Claude
// Code shows a hook's context whole only up to 10,000 characters).
func TestWrittenBlockStaysWithinBudgetAndMaxChars(t *testing.T) {
	notes := []string{
		"The billing repo keeps its AGENTS.md memory block between <!-- memctl:begin --> and <!-- memctl:end -->",
		"Never hand edit text inside <!-- memctl:begin --> in CLAUDE.md; the nightly job rewrites it",
		"A stray <!-- memctl:end --> line broke the GEMINI.md sync last week",
		"Searching for <!-- memctl: finds both markers in aider memory files",
		"Release checklist: confirm <!-- memctl:begin --> exists before tagging",
		"Docs site build strips <!-- memctl:end --> comments from rendered pages",
	}
	var topic strings.Builder
	topic.WriteString("# Notes\n\n")
	for i, n := range notes {
		fmt.Fprintf(&topic, "- [note-%03d] %s (user · 2026-01-05)\n", i+1, n)
	}
	c := loadMem(t, map[string]string{"topics/notes.md": topic.String()})
	o := baseOpts(t)
	o.Task = "AGENTS.md memctl block markers"
	o.TopK = 0
	o.Budget = 190
	o.MaxChars = 700
	r, err := Inject(c, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Items) < 2 {
		t.Fatalf("test premise: %d items injected:\n%s", len(r.Items), r.Block)
	}
	path := filepath.Join(t.TempDir(), "AGENTS.md")
	if _, err := WriteBlock(context.Background(), path, r.Block); err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	begin := strings.Index(s, "-->\n") + len("-->\n")
	end := strings.LastIndex(s, BlockEnd)
	written := s[begin:end]
	if n := utf8.RuneCountInString(written); n > o.MaxChars {
		t.Errorf("the block --write put in the file is %d characters, over --max-chars %d (Inject measured %d)", n, o.MaxChars, utf8.RuneCountInString(r.Block))
	}
	if n := o.Counter.Count(written); n > o.Budget {
		t.Errorf("the block --write put in the file is %d tokens, over --budget %d (Inject measured %d)", n, o.Budget, r.UsedTokens)
	}
}
