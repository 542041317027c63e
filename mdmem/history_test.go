package mdmem

import "testing"

func TestEntryChange(t *testing.T) {
	base := &Entry{ID: "pref-001", Content: "Uses Go", File: MainFile, Section: "User preferences", Place: PlaceCore, Raw: "- [pref-001] Uses Go (user_explicit · 2026-12-01)\n"}
	with := func(f func(e *Entry)) *Entry { e := *base; f(&e); return &e }
	tests := []struct {
		name     string
		old, now *Entry
		want     string
	}{
		{"absent both", nil, nil, ""},
		{"added", nil, base, ChangeAdded},
		{"removed", base, nil, ChangeRemoved},
		{"content", base, with(func(e *Entry) { e.Content = "Uses Rust" }), ChangeChanged},
		{"archived", base, with(func(e *Entry) { e.Place, e.Section = PlaceArchive, "Archive" }), ChangeArchived},
		{"moved file", base, with(func(e *Entry) { e.File, e.Place = "topics/go.md", PlaceTopic }), ChangeMoved},
		{"metadata", base, with(func(e *Entry) { e.Raw = "- [pref-001] Uses Go (user_explicit · 2026-12-01 · updated 2026-12-02)\n" }), ChangeMeta},
		{"untouched", base, with(func(e *Entry) {}), ""},
	}
	for _, tt := range tests {
		if got := entryChange(tt.old, tt.now); got != tt.want {
			t.Errorf("%s: entryChange = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestIsMemoryFilePath(t *testing.T) {
	for p, want := range map[string]bool{
		"MEMORY.md": true, "topics/": true, "topics/go.md": true,
		"topics/.go.md.swp": false, "topics/sub/x.md": false, "topics/4913": false,
		".memctl/state.json": false, "README.md": false, "topics/#x.md#": false,
	} {
		if got := isMemoryFilePath(p); got != want {
			t.Errorf("isMemoryFilePath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestDescribeEntryChanges(t *testing.T) {
	e := func(id, content, file string, place Place) *Entry {
		return &Entry{ID: id, Content: content, File: file, Place: place, Raw: "- [" + id + "] " + content + "\n"}
	}
	before := map[string]*Entry{
		"pref-001": e("pref-001", "Uses Go", MainFile, PlaceCore),
		"todo-002": e("todo-002", "Ship it", MainFile, PlaceCore),
		"dec-004":  e("dec-004", "Use Redis", MainFile, PlaceCore),
		"fact-009": e("fact-009", "Same", MainFile, PlaceCore),
	}
	after := map[string]*Entry{
		"pref-001": e("pref-001", "Uses Rust", MainFile, PlaceCore),
		"todo-002": e("todo-002", "Ship it", "topics/ops.md", PlaceTopic),
		"fact-010": e("fact-010", "New", MainFile, PlaceCore),
		"fact-009": e("fact-009", "Same", MainFile, PlaceCore),
	}
	got := describeEntryChanges([]string{"todo-002", "pref-001", "dec-004", "fact-010", "fact-009", "pref-001"}, before, after)
	want := "Entries: added fact-010; changed pref-001; moved todo-002 (MEMORY.md → topics/ops.md); removed dec-004."
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if got := describeEntryChanges([]string{"fact-009"}, before, after); got != "" {
		t.Errorf("unchanged entry described: %q", got)
	}
}
