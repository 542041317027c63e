package mdmem

import "testing"

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
