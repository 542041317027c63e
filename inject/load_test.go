package inject

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memctl/memctl/mdmem"
)

// TestReadCorpusMatchesLoad: the file-at-a-time reader gives exactly what
// NewCorpus(mdmem.Load) gives: notes, topics and errors, over random
// memories, the goldmark path (nested items, quotes, code), front matter,
// skipped names, a missing MEMORY.md, and refused symlinks and files.
func TestReadCorpusMatchesLoad(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(9))
	mems := []map[string]string{
		randomFiles(rng, 30, 60),
		{"MEMORY.md": sampleMain, "topics/db-notes.md": sampleDB},
		{"topics/a.md": "---\ndescription: alpha things\nkeywords: [x, y]\n---\n# A\n\n- [fact-001] one\n  - nested\n> quote\n\n1. [fact-002] two (src · 2025-01-02)\n\n```\n- not an item\n```\n",
			"topics/.hidden.md": "- [fact-009] hidden\n", "topics/Bad Name.md": "- [fact-008] bad\n", "topics/b.txt": "- x\n",
			"topics/b.md": "- [fact-003] three\r\n- [fact-004] four\r\n"},
		{"MEMORY.md": "# Core profile\n\n## Key decisions\n\n- [dec-001] 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \xff bad byte\n* [dec-002] star\n+ [dec-003] plus\n\n# Archive\n\n- [dec-004] old\n"},
		{},
	}
	for i, files := range mems {
		check(t, ctx, fmt.Sprint(i), writeMem(t, files))
	}
	// Refusals: a symlinked topics/, a symlinked topic file, topics/ a file.
	dir := writeMem(t, mems[1])
	real := filepath.Join(t.TempDir(), "real")
	os.Rename(filepath.Join(dir, "topics"), real)
	os.Symlink(real, filepath.Join(dir, "topics"))
	check(t, ctx, "symlinked topics", dir)
	dir = writeMem(t, mems[1])
	os.Symlink(filepath.Join(dir, "topics/db-notes.md"), filepath.Join(dir, "topics/link.md"))
	check(t, ctx, "symlinked topic", dir)
	dir = writeMem(t, map[string]string{"MEMORY.md": sampleMain, "topics": "a file"})
	check(t, ctx, "topics file", dir)
	dir = writeMem(t, mems[1])
	os.Remove(filepath.Join(dir, "MEMORY.md"))
	os.Symlink(filepath.Join(dir, "topics/db-notes.md"), filepath.Join(dir, "MEMORY.md"))
	check(t, ctx, "symlinked MEMORY.md", dir)
}

func check(t *testing.T, ctx context.Context, name, dir string) {
	t.Helper()
	m, werr := mdmem.Load(ctx, dir)
	v, err := mdmem.OpenReadView(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, gerr := readCorpus(ctx, v, dir)
	v.Close()
	if fmt.Sprint(werr) != fmt.Sprint(gerr) {
		t.Fatalf("%s: error %v, mdmem.Load %v", name, gerr, werr)
	}
	if werr != nil {
		return
	}
	if len(m.Entries()) == 0 && name != "4" {
		t.Fatalf("%s: no entries: the case tests nothing", name)
	}
	want := NewCorpus(m)
	if len(got.notes) != len(want.notes) || len(want.notes) > cap(got.notes) {
		t.Fatalf("%s: %d notes (capacity %d), want %d", name, len(got.notes), cap(got.notes), len(want.notes))
	}
	for i := range want.notes {
		a, b := fmt.Sprintf("%+v", want.notes[i]), fmt.Sprintf("%+v", got.notes[i])
		if a != b {
			t.Fatalf("%s: note %d:\n%s\n%s", name, i, b, a)
		}
	}
	if a, b := fmt.Sprintf("%+v", want.Topics), fmt.Sprintf("%+v", got.Topics); a != b {
		t.Fatalf("%s: topics\n%s\n%s", name, b, a)
	}
	if strings.Contains(name, "symlink") || strings.Contains(name, "file") {
		t.Fatalf("%s: not refused", name)
	}
}
