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
