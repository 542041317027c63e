package mdmem

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const limitsMemory = "# Core profile\n\n## User preferences\n\n## Project constraints\n\n## Key decisions\n\n## Pending confirmation\n\n# Topic index\n\n# Archive\n"

func loadLimits(t *testing.T, files map[string]string) *Memory {
	t.Helper()
	dir := t.TempDir()
	for p, s := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func noteEntry(n int) *Entry {
	return &Entry{ID: FormatID("note", n), Category: "note", Source: "test",
		Content: fmt.Sprintf("Note %d says something long enough to fill a topic file with a few hundred bytes of text about subject %d", n, n%17),
		Created: time.Date(2026, 1, 8, 0, 0, 0, 0, time.UTC)}
}

// applyFiles writes changed files back into a copy of the memory's files.
func applyFiles(m *Memory, changed map[string][]byte) map[string]string {
	files := map[string]string{}
	for _, d := range m.Docs() {
		files[d.Path] = string(d.Src)
	}
	for p, b := range changed {
		files[p] = string(b)
	}
	return files
}

// Finding 8: an insert that would take a topic file past files.max_bytes
// goes to topics/<slug>-2.md, -3, …, each in the topic index; the next
// edit continues the last part, also when given a part as the topic.
func TestTopicFileSplitAtLimit(t *testing.T) {
	const limit = MinWriteBytes
	m := loadLimits(t, map[string]string{MainFile: limitsMemory})
	ed := m.Edit()
	ed.SetMaxBytes(limit)
	ed.SetTopicTitle("note", "Notes")
	paths := map[string]int{}
	n := 0
	for ; n < 400; n++ {
		p, err := ed.InsertAt(noteEntry(n+1), Target{Place: PlaceTopic, Topic: "note"})
		if err != nil {
			t.Fatal(err)
		}
		paths[p]++
	}
	out, err := ed.Changed()
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) < 3 || paths["topics/note.md"] == 0 || paths["topics/note-2.md"] == 0 || paths["topics/note-3.md"] == 0 {
		t.Fatalf("entries per file: %v", paths)
	}
	for p, b := range out {
		if strings.HasPrefix(p, TopicDir+"/") && len(b) > limit {
			t.Errorf("%s is %d bytes, over %d", p, len(b), limit)
		}
	}
	if !strings.HasPrefix(string(out["topics/note-2.md"]), "# Notes (part 2)\n") {
		t.Errorf("part 2 title: %.40q", out["topics/note-2.md"])
	}
	main := string(out[MainFile])
	for p := range paths {
		if !strings.Contains(main, "→ "+p+"\n") {
			t.Errorf("%s not in the topic index:\n%s", p, main)
		}
	}

	// The next edit continues in the last part; a part named as the topic
	// stands for the whole topic.
	m2 := loadLimits(t, applyFiles(m, out))
	if ps := m2.Lint(); len(ps) != 0 {
		t.Fatalf("lint: %v", ps)
	}
	last := fmt.Sprintf("topics/note-%d.md", len(paths))
	ed = m2.Edit()
	ed.SetMaxBytes(limit)
	for _, topic := range []string{"note", "note-2"} {
		n++
		p, err := ed.InsertAt(noteEntry(n), Target{Place: PlaceTopic, Topic: topic})
		if err != nil {
			t.Fatal(err)
		}
		if p != last {
			t.Errorf("topic %s: went to %s, want %s", topic, p, last)
		}
	}
	if _, err := ed.Changed(); err != nil {
		t.Fatal(err)
	}
}

// A person's own topic named like a part is not taken for one.
func TestPersonsTopicNamedLikeAPart(t *testing.T) {
	big := "# Notes\n\n" + strings.Repeat("- [note-999] Filler line of a full topic file about nothing in particular at all (test · 2026-01-08)\n", 200)
	m := loadLimits(t, map[string]string{MainFile: limitsMemory, "topics/note.md": big,
		"topics/note-2.md": "# Release two\n\n- [fact-001] Release two ships in May (test · 2026-01-08)\n"})
	ed := m.Edit()
	ed.SetMaxBytes(MinWriteBytes)
	p, err := ed.InsertAt(noteEntry(1), Target{Place: PlaceTopic, Topic: "note"})
	if err != nil {
		t.Fatal(err)
	}
	if p != "topics/note-3.md" {
		t.Fatalf("went to %s, want topics/note-3.md", p)
	}
}

// Finding 8: Changed refuses a file memctl could not read back, and a
// MEMORY.md grown past files.max_bytes, before anything is written.
func TestChangedRefusesOversize(t *testing.T) {
	t.Run("read limit", func(t *testing.T) {
		m := loadLimits(t, map[string]string{MainFile: limitsMemory})
		ed := m.Edit()
		e := noteEntry(1)
		e.Content = strings.Repeat("x", MaxFileBytes)
		if err := ed.Insert(e, Target{Place: PlaceTopic, Topic: "huge"}); err != nil {
			t.Fatal(err)
		}
		_, err := ed.Changed()
		var big *FileTooLargeError
		if !errors.As(err, &big) || big.Path != "topics/huge.md" || big.Limit != MaxFileBytes {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("MEMORY.md", func(t *testing.T) {
		m := loadLimits(t, map[string]string{MainFile: limitsMemory})
		ed := m.Edit()
		ed.SetMaxBytes(MinWriteBytes)
		for i := 1; i <= 200; i++ {
			e := noteEntry(i)
			e.ID, e.Category = FormatID("pref", i), "preference"
			if err := ed.Insert(e, Target{Place: PlaceCore}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := ed.Changed()
		var big *FileTooLargeError
		if !errors.As(err, &big) || big.Path != MainFile || big.Limit != MinWriteBytes {
			t.Fatalf("err = %v", err)
		}
		if !strings.Contains(err.Error(), "nothing written") || !strings.Contains(big.Hint(), "cannot be split") {
			t.Fatalf("message %q, hint %q", err, big.Hint())
		}
	})
	t.Run("MEMORY.md over the limit may shrink", func(t *testing.T) {
		src := strings.Replace(limitsMemory, "## User preferences\n", "## User preferences\n"+strings.Repeat("- [pref-001] x (test · 2026-01-08)\n", 1)+strings.Repeat("A hand-written paragraph line.\n", 1000), 1)
		m := loadLimits(t, map[string]string{MainFile: src})
		ed := m.Edit()
		ed.SetMaxBytes(MinWriteBytes)
		ed.Remove(m.Find("pref-001"))
		if _, err := ed.Changed(); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCheckWriteSize(t *testing.T) {
	small := make([]byte, 100)
	for _, tc := range []struct {
		path     string
		old, new int
		max      int
		ok       bool
	}{
		{MainFile, 0, 100, 50, false},
		{MainFile, 200, 100, 50, true}, // shrinks
		{MainFile, 0, 100, 100, true},
		{"topics/x.md", 0, 100, 50, true}, // in-place growth of a topic file
		{"topics/x.md", 0, MaxFileBytes + 1, 0, false},
	} {
		data := small
		if tc.new > len(small) {
			data = make([]byte, tc.new)
		}
		err := CheckWriteSize(tc.path, make([]byte, tc.old), data[:tc.new], tc.max)
		if (err == nil) != tc.ok {
			t.Errorf("%+v: err = %v", tc, err)
		}
	}
}

// Finding 8: an import that would write a topic file past files.max_bytes
// splits it, and every file stays readable; an import that would grow
// MEMORY.md past it is refused with nothing written.
func TestImportSplitsAndStaysReadable(t *testing.T) {
	ctx := context.Background()
	t.Setenv("GIT_AUTHOR_NAME", "test")
	t.Setenv("GIT_AUTHOR_EMAIL", "test@localhost")
	s, _, err := Init(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s.Config.Files.MaxBytes = MinWriteBytes
	var cands []*Candidate
	for i := 0; i < 500; i++ {
		cands = append(cands, &Candidate{Content: noteEntry(i).Content, Category: "note", Source: "test", CreatedAt: time.Date(2026, 1, 8, 0, 0, 0, 0, time.UTC)})
	}
	res, err := s.Import(ctx, cands)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Places) < 3 {
		t.Fatalf("places %v: not split", res.Places)
	}
	m, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(m.Entries()); got != 500 {
		t.Fatalf("%d entries after import, want 500", got)
	}
	for _, d := range m.Docs() {
		if len(d.Src) > MinWriteBytes {
			t.Errorf("%s is %d bytes", d.Path, len(d.Src))
		}
	}
	if ps := m.Lint(); len(ps) != 0 {
		t.Fatalf("lint: %v", ps)
	}

	var prefs []*Candidate
	for i := 0; i < 200; i++ {
		prefs = append(prefs, &Candidate{Content: noteEntry(i).Content, Category: "preference", Source: "test", CreatedAt: time.Date(2026, 1, 8, 0, 0, 0, 0, time.UTC)})
	}
	_, err = s.Import(ctx, prefs)
	var big *FileTooLargeError
	if !errors.As(err, &big) || big.Path != MainFile {
		t.Fatalf("err = %v", err)
	}
	m2, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(m2.Entries()) != 500 {
		t.Fatalf("refused import wrote entries: %d", len(m2.Entries()))
	}
}
