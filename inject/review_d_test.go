package inject

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestReviewD_ArchiveMovedToATopicFileIsInjected: when MEMORY.md reaches
// files.max_bytes, memctl's own hint (mdmem.FileTooLargeError.Hint) tells
// the person to "move entries or sections to topic files by hand (the
// archive is the usual bulk)". A person who does so moves "# Archive"
// into topics/archive.md. Every entry of a topic file is PlaceTopic
// (mdmem placeOf ignores headings in topic files), so archived entries
// become live L2 entries: a rejected one (memctl reject wrote "rejected
// <date>") and one a person deleted by hand ("removed by hand on ...")
// are injected, although "archive ... never injected" (INJECT.md) and
// the person explicitly rejected the first.
func TestReviewD_ArchiveMovedToATopicFileIsInjected(t *testing.T) {
	c := loadMem(t, map[string]string{
		"MEMORY.md": "# Core profile\n## Key decisions\n- [dec-001] Orders are stored in Postgres (user · 2026-01-02)\n\n# Topic index\n- Archive → topics/archive.md\n",
		"topics/archive.md": "# Archive\n\n" +
			"- [fact-009] The production database runs MySQL 8.0 (agent · 2026-01-05 · rejected 2026-01-10)\n" +
			"- [fact-010] The production database password is rotated by hand (user · 2026-01-05 · removed by hand on 2026-01-12)\n",
	})
	o := baseOpts(t)
	o.Task = "which production database version, password rotation"
	r, err := Inject(c, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"fact-009", "fact-010"} {
		if strings.Contains(r.Block, "["+id+"]") {
			t.Errorf("archived entry %s (moved with the archive into a topic file, as memctl's hint advises) is injected:\n%s", id, r.Block)
		}
	}
}

// TestReviewD_WriteBlockExceedsBudgetAndMaxChars: inject --write puts
// res.Block between the markers, but ReplaceBlock first rewrites every
// "<!-- memctl:" in it to "<!-- (quoted) memctl:" — after Inject measured
// the block. A stored entry that mentions memctl's own markers (a note
// about AGENTS.md, or hostile text) so makes the block in the file longer
// than --max-chars and --budget allow ("The whole printed block ... never
// exceeds --budget tokens, nor --max-chars characters"; INJECT.md: Claude
// Code shows a hook's context whole only up to 10,000 characters).
func TestReviewD_WriteBlockExceedsBudgetAndMaxChars(t *testing.T) {
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
