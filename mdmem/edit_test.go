package mdmem

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files")

// memoryFrom builds a Memory from files written into a temp dir.
func memoryFrom(t testing.TB, files map[string]string) *Memory {
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

// TestEditGolden applies one edit of every kind to each golden input and
// compares the result with <name>.golden (go test -update rewrites them).
func TestEditGolden(t *testing.T) {
	for _, name := range []string{"design.md", "odd.md", "crlf.md"} {
		t.Run(name, func(t *testing.T) {
			src := string(readGolden(t, name))
			m := memoryFrom(t, map[string]string{MainFile: src})
			ed := m.Edit()
			entries := m.Main.Entries
			first := entries[0]
			changed := *first
			changed.Content = "Replaced: " + first.Content
			ed.Replace(first, &changed)
			last := entries[len(entries)-1]
			ed.Remove(last)
			must(t, ed.Insert(&Entry{ID: "dec-100", Category: "decision", Content: "New decision", Source: "test", Created: date("2026-02-01")}, Target{Place: PlaceCore}))
			must(t, ed.Insert(&Entry{ID: "cons-100", Category: "constraint", Content: "New constraint", Source: "test", Created: date("2026-02-01")}, Target{Place: PlaceCore}))
			must(t, ed.Insert(&Entry{ID: "todo-100", Category: "todo", Content: "Is it true?", Source: "test", See: []string{"dec-100"}}, Target{Place: PlacePending}))
			must(t, ed.Insert(&Entry{ID: "fact-100", Category: "fact", Content: "A topic fact", Source: "test"}, Target{Place: PlaceTopic, Topic: "new-topic"}))
			if len(entries) > 2 {
				mv := entries[1]
				moved := *mv
				moved.SupersededBy, moved.SupersededOn = "dec-100", date("2026-02-01")
				must(t, ed.Move(mv, &moved, Target{Place: PlaceArchive}))
			}
			out, err := ed.Changed()
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			for _, p := range []string{MainFile, "topics/new-topic.md"} {
				got.WriteString("==> " + p + " <==\n")
				got.Write(out[p])
			}
			golden := filepath.Join("testdata", "golden", strings.TrimSuffix(name, ".md")+".golden")
			if *update {
				must(t, os.WriteFile(golden, got.Bytes(), 0o644))
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("edit of %s differs from %s:\n%s", name, golden, got.String())
			}
		})
	}
}

// TestEditTouchesOnlyTheEntry replaces each entry of the hand-written files
// in turn: every other byte must stay identical, and every other entry must
// parse back unchanged.
func TestEditTouchesOnlyTheEntry(t *testing.T) {
	for _, name := range []string{"design.md", "odd.md", "crlf.md"} {
		src := readGolden(t, name)
		m := memoryFrom(t, map[string]string{MainFile: string(src)})
		for i, e := range m.Main.Entries {
			if e.ID == "" {
				continue
			}
			ed := m.Edit()
			c := *e
			c.Content = "Edited ✓ " + e.Content
			ed.Replace(e, &c)
			out, err := ed.Changed()
			if err != nil {
				t.Fatalf("%s %s: %v", name, e.ID, err)
			}
			got := out[MainFile]
			if !bytes.HasPrefix(got, src[:e.Start]) || !bytes.HasSuffix(got, src[e.HeadEnd:]) {
				t.Errorf("%s: editing %s changed bytes outside the entry", name, e.ID)
			}
			d := ParseDoc(MainFile, got)
			for j, o := range d.Entries {
				if j == i {
					if o.Content != c.Content || o.Place != e.Place || o.Category != e.Category {
						t.Errorf("%s: edited %s reads back as %+v", name, e.ID, o)
					}
					continue
				}
				if o.Raw != m.Main.Entries[j].Raw {
					t.Errorf("%s: editing %s changed %s", name, e.ID, o.ID)
				}
			}
		}
	}
}

func TestNoEditChangesNothing(t *testing.T) {
	m := memoryFrom(t, map[string]string{MainFile: string(readGolden(t, "odd.md"))})
	out, err := m.Edit().Changed()
	if err != nil || len(out) != 0 {
		t.Fatalf("empty edit = %v, %v", out, err)
	}
}

func TestInsertCreatesMissingSections(t *testing.T) {
	tests := []struct {
		name, src string
		target    Target
		entry     *Entry
		want      string
	}{
		{"empty file", "", Target{Place: PlaceCore}, &Entry{ID: "pref-001", Category: "preference", Content: "x"},
			"# Core profile\n## User preferences\n- [pref-001] x\n"},
		{"core before index", "# Topic index\n- A → topics/a.md\n", Target{Place: PlaceCore}, &Entry{ID: "dec-001", Category: "decision", Content: "x"},
			"# Core profile\n## Key decisions\n- [dec-001] x\n\n# Topic index\n- A → topics/a.md\n"},
		{"subsection order", "# Core profile\n## User preferences\n- [pref-001] a\n\n## Pending confirmation\n", Target{Place: PlaceCore}, &Entry{ID: "cons-001", Category: "constraint", Content: "x"},
			"# Core profile\n## User preferences\n- [pref-001] a\n\n## Project constraints\n- [cons-001] x\n\n## Pending confirmation\n"},
		{"archive at end, no trailing newline", "# Core profile\n- stray", Target{Place: PlaceArchive}, &Entry{ID: "dec-001", Category: "decision", Content: "x"},
			"# Core profile\n- stray\n\n# Archive\n- [dec-001] x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := memoryFrom(t, map[string]string{MainFile: tt.src})
			ed := m.Edit()
			must(t, ed.Insert(tt.entry, tt.target))
			out, err := ed.Changed()
			if err != nil {
				t.Fatal(err)
			}
			if string(out[MainFile]) != tt.want {
				t.Errorf("got\n%q\nwant\n%q", out[MainFile], tt.want)
			}
		})
	}
}

func TestInsertRejectsBadTopic(t *testing.T) {
	m := memoryFrom(t, map[string]string{MainFile: ""})
	for _, topic := range []string{"../etc", "a/b", "", ".x", "/abs"} {
		if err := m.Edit().Insert(&Entry{ID: "fact-1", Category: "fact", Content: "x"}, Target{Place: PlaceTopic, Topic: topic}); err == nil {
			t.Errorf("topic %q accepted", topic)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSpilledTopicFilesReadBackAsWritten: an Editor that spills the topic
// files it creates (SpillTo, as import does) gives the same files, byte
// for byte, as one that holds them, whether a file ends on a chunk
// boundary, holds one chunk and a tail, or many; ChangedLoad's sizes are
// the files' sizes.
func TestSpilledTopicFilesReadBackAsWritten(t *testing.T) {
	for _, tc := range []struct {
		name     string
		entries  int
		maxBytes int
	}{
		{"under one chunk", 20, 0},
		{"many chunks", 3000, 0},
		{"split into parts", 3000, 100 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			files := map[string]string{MainFile: "# Core profile\n\n# Topics\n\n- Old → topics/old.md\n", "topics/old.md": "# Old\n\n- [fact-1] Kept.\n"}
			edit := func(spill bool) (map[string][]byte, map[string]Created) {
				m := memoryFrom(t, files)
				ed := m.Edit()
				ed.SetMaxBytes(tc.maxBytes)
				if spill {
					f, err := os.CreateTemp(t.TempDir(), "spill")
					must(t, err)
					t.Cleanup(func() { f.Close() })
					ed.SpillTo(f)
				}
				for i := range tc.entries {
					e := &Entry{ID: fmt.Sprintf("note-%d", i+2), Category: "note", Content: strings.Repeat("word ", 1+i%37) + "end"}
					topic := []string{"new", "other", "old"}[i%3]
					_, err := ed.InsertAt(e, Target{Place: PlaceTopic, Topic: topic})
					must(t, err)
				}
				out, created, err := ed.ChangedLoad()
				must(t, err)
				return out, created
			}
			held, heldNew := edit(false)
			spilled, spilledNew := edit(true)
			if len(held) != len(spilled) || len(heldNew) != len(spilledNew) {
				t.Fatalf("files: %d+%d held, %d+%d spilled", len(held), len(heldNew), len(spilled), len(spilledNew))
			}
			for p, b := range held {
				if !bytes.Equal(b, spilled[p]) {
					t.Errorf("%s differs", p)
				}
			}
			chunks := 0
			for p, c := range heldNew {
				want, err := c.Load()
				must(t, err)
				got, err := spilledNew[p].Load()
				must(t, err)
				if !bytes.Equal(want, got) || spilledNew[p].Size != len(want) || c.Size != len(want) {
					t.Errorf("%s: %d bytes held (size %d), %d spilled (size %d), equal %v", p, len(want), c.Size, len(got), spilledNew[p].Size, bytes.Equal(want, got))
				}
				chunks += len(want) / spillChunk
			}
			if tc.entries > 1000 && chunks == 0 {
				t.Errorf("no file reached a spill chunk: the test spills nothing")
			}
		})
	}
}

// TestVerifyCatchesACreatedFileThatIsNotItsInserts: the final check reads
// a topic file the edit creates back and refuses it unless it holds the
// entries inserted into it, in order, and no other.
func TestVerifyCatchesACreatedFileThatIsNotItsInserts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tamper func(b *fileBuf)
	}{
		{"as inserted", func(b *fileBuf) {}},
		{"an entry more", func(b *fileBuf) { b.data = append(b.data, "- [note-9] Smuggled.\n"...) }},
		{"an entry less", func(b *fileBuf) { b.data = b.data[:bytes.LastIndex(b.data, []byte("- [note-3]"))] }},
		{"two swapped", func(b *fileBuf) {
			b.data = bytes.Replace(bytes.Replace(b.data, []byte("[note-2]"), []byte("[note-X]"), 1), []byte("[note-3]"), []byte("[note-2]"), 1)
			b.data = bytes.Replace(b.data, []byte("[note-X]"), []byte("[note-3]"), 1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := memoryFrom(t, map[string]string{MainFile: "# Core profile\n"})
			ed := m.Edit()
			for i := 1; i <= 3; i++ {
				_, err := ed.InsertAt(&Entry{ID: fmt.Sprintf("note-%d", i), Category: "note", Content: fmt.Sprintf("Note %d.", i)}, Target{Place: PlaceTopic, Topic: "new"})
				must(t, err)
			}
			tc.tamper(ed.created["new"])
			ed.created["new"].size = len(ed.created["new"].data)
			_, err := ed.Changed()
			if ok := tc.name == "as inserted"; (err == nil) != ok {
				t.Fatalf("Changed: %v", err)
			}
		})
	}
}
