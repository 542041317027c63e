package inject

import (
	"strings"
	"testing"
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
