package mdmem

import (
	"strings"
	"testing"

	"github.com/memctl/memctl/templates"
)

func TestMergeOnto(t *testing.T) {
	const old = "# A\n- [fact-001] One\n- [fact-002] Two\n"
	tests := []struct {
		name, path, new, theirs string
		want                    string // "" = a conflict
	}{
		{"theirs untouched", "topics/a.md", old + "- [fact-003] Three\n", old, old + "- [fact-003] Three\n"},
		{"both append", "topics/a.md", old + "- [fact-003] Three\n", old + "- [fact-009] Mine\n",
			old + "- [fact-009] Mine\n- [fact-003] Three\n"},
		{"person deletes, memctl appends", "topics/a.md", old + "- [fact-003] Three\n", "# A\n- [fact-001] One\n",
			"# A\n- [fact-001] One\n- [fact-003] Three\n"},
		{"person edits one, memctl rewrites another", "topics/a.md",
			"# A\n- [fact-001] One\n- [fact-002] Two, updated\n", "# A\n- [fact-001] One, mine\n- [fact-002] Two\n",
			"# A\n- [fact-001] One, mine\n- [fact-002] Two, updated\n"},
		{"both rewrite one entry", "topics/a.md", "# A\n- [fact-001] Uno\n- [fact-002] Two\n",
			"# A\n- [fact-001] Eins\n- [fact-002] Two\n", ""},
		{"person deletes what memctl rewrites", "topics/a.md", "# A\n- [fact-001] Uno\n- [fact-002] Two\n",
			"# A\n- [fact-002] Two\n", ""},
		{"the same id added twice", "topics/a.md", old + "- [fact-003] Three\n", old + "- [fact-003] Mine\n", ""},
		{"headings both sides", "MEMORY.md", "# Core\n## Key decisions\n- [dec-001] D\n## Topics\n- [a](topics/a.md)\n",
			"# Core\n## Key decisions\n- [dec-009] Mine\n", "# Core\n## Key decisions\n- [dec-009] Mine\n- [dec-001] D\n## Topics\n- [a](topics/a.md)\n"},
		{"state keeps the larger marks", StatePath, "{\"last_id\": {\"fact\": 7, \"dec\": 2}}\n",
			"{\"last_id\": {\"fact\": 9}}\n", "{\n  \"last_id\": {\n    \"dec\": 2,\n    \"fact\": 9\n  }\n}\n"},
		{"another file changed both ways", ".memctl/tombstones.json", "[1]\n", "[2]\n", ""},
	}
	oldOf := func(path string) string {
		switch path {
		case StatePath:
			return "{\"last_id\": {\"fact\": 5}}\n"
		case "MEMORY.md":
			return "# Core\n## Key decisions\n"
		case ".memctl/tombstones.json":
			return "[]\n"
		}
		return old
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := mergeOnto(tt.path, []byte(oldOf(tt.path)), []byte(tt.new), []byte(tt.theirs))
			if tt.want == "" {
				if ok {
					t.Fatalf("merged %q, want a conflict", got)
				}
				return
			}
			if !ok || string(got) != tt.want {
				t.Errorf("got %q (ok %v), want %q", got, ok, tt.want)
			}
		})
	}
}

func TestMatchLinesIsACommonSubsequence(t *testing.T) {
	a := []string{"x", "a", "b", "x", "c", "d", "x"}
	b := []string{"a", "x", "c", "b", "x", "d"}
	m := matchLines(a, b)
	last := -1
	n := 0
	for i, j := range m {
		if j < 0 {
			continue
		}
		if j <= last || a[i] != b[j] {
			t.Fatalf("match %v is not an increasing pairing of equal lines", m)
		}
		last = j
		n++
	}
	if n < 4 {
		t.Errorf("matched %d lines of %v, want a longest common subsequence (4)", n, m)
	}
}

func FuzzMerge3Lines(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nb\nc\nd\n", "a\nc\n")
	f.Fuzz(func(t *testing.T, o, a, b string) {
		got := merge3Lines(splitLines([]byte(o)), splitLines([]byte(a)), splitLines([]byte(b)))
		if a == o && len(got) != len(splitLines([]byte(b))) {
			t.Errorf("memctl changed nothing, but the merge is not the person's version: %q", got)
		}
		if b == o && len(got) != len(splitLines([]byte(a))) {
			t.Errorf("the person changed nothing, but the merge is not memctl's version: %q", got)
		}
	})
}

// insertInto returns MEMORY.md src with the entries inserted where memctl
// puts them.
func insertInto(t *testing.T, src string, es ...*Entry) string {
	t.Helper()
	m := memoryFrom(t, map[string]string{MainFile: src})
	ed := m.Edit()
	for _, e := range es {
		must(t, ed.Insert(e, Target{Place: PlaceCore}))
	}
	out, err := ed.Changed()
	must(t, err)
	return string(out[MainFile])
}

func lintOf(t *testing.T, main string) []Problem {
	return memoryFrom(t, map[string]string{MainFile: main}).Lint()
}

// TestMergeKeepsEntriesInTheirSection: a line merge must not slide
// memctl's entry under a heading the person added, removed or rewrote at
// the same spot; such a merge is a conflict (or comes out lint-clean with
// the entry where memctl put it).
func TestMergeKeepsEntriesInTheirSection(t *testing.T) {
	withDec1 := insertInto(t, templates.Embedded("MEMORY.md"), &Entry{ID: "dec-001", Category: "decision", Content: "Use Go", Source: "test"})
	dec2 := &Entry{ID: "dec-002", Category: "decision", Content: "Use SQLite", Source: "test"}
	pref1 := &Entry{ID: "pref-001", Category: "preference", Content: "Short answers", Source: "test"}
	tmpl := templates.Embedded("MEMORY.md")
	for _, tc := range []struct {
		name, old, new, theirs, id string
	}{
		{"a new subsection where memctl appends", withDec1, insertInto(t, withDec1, dec2),
			strings.Replace(withDec1, "- [dec-001] Use Go (test ·)\n", "- [dec-001] Use Go (test ·)\n- [dec-050] Ship weekly\n\n## Team\nWe are three people.\n", 1), "dec-002"},
		{"the empty heading memctl inserts under removed", tmpl, insertInto(t, tmpl, pref1),
			strings.Replace(tmpl, "## User preferences\n\n", "", 1), "pref-001"},
		{"the person's version in CRLF", withDec1, insertInto(t, withDec1, dec2),
			strings.ReplaceAll(strings.Replace(withDec1, "## Pending confirmation\n", "## Pending confirmation\n- [todo-050] Check this\n", 1), "\n", "\r\n"), "dec-002"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			merged, ok := mergeOnto(MainFile, []byte(tc.old), []byte(tc.new), []byte(tc.theirs))
			if !ok {
				return // a conflict: recovery undoes the write, nothing is misplaced
			}
			if ps := lintOf(t, string(merged)); len(ps) != 0 {
				t.Errorf("merged MEMORY.md lints: %v\n%s", ps, merged)
			}
			for _, e := range memoryFrom(t, map[string]string{MainFile: string(merged)}).Main.Entries {
				if e.ID == tc.id && e.Place != PlaceCore {
					t.Errorf("%s landed in %s (%q)", tc.id, e.Place, e.Section)
				}
			}
		})
	}
}

// TestForgetMatchesWholeWords: forget's matching of queued candidates and
// transcript text finds the forgotten text as whole words only.
func TestForgetMatchesWholeWords(t *testing.T) {
	for _, tc := range []struct {
		s, sub string
		want   int
	}{
		{"uses go", "uses go", 0},
		{"alice uses google meet", "uses go", -1},
		{"the cli uses go 1.26", "uses go", 8},
		{"reuses go and uses go", "uses go", 14},
		{"café uses go", "uses go", 6},
		{"", "go", -1},
	} {
		if got := indexWords(tc.s, tc.sub); got != tc.want {
			t.Errorf("indexWords(%q, %q) = %d, want %d", tc.s, tc.sub, got, tc.want)
		}
	}
	got := string(replaceWords([]byte("Alice Uses Google; Bob Uses Go daily. Uses Go"), "Uses Go", "[forgotten]"))
	if want := "Alice Uses Google; Bob [forgotten] daily. [forgotten]"; got != want {
		t.Errorf("replaceWords = %q, want %q", got, want)
	}
}
