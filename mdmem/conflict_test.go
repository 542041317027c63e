package mdmem

import (
	"strconv"
	"strings"
	"testing"
)

// TestFindConflictsMarkers pins which lines are conflict markers: git's
// seven-character markers at a line start; "=======" and "|||||||" only
// inside a conflict (elsewhere "=======" underlines a setext heading); a
// stray ">>>>>>>" on its own; an unclosed conflict runs to the end.
func TestFindConflictsMarkers(t *testing.T) {
	tests := []struct {
		name, src string
		want      string // "line:marker" …
	}{
		{"none", "# A\n- [dec-001] x\n", ""},
		{"setext heading", "Title\n=======\n- [dec-001] x\n", ""},
		{"merge", "a\n<<<<<<< HEAD\nb\n=======\nc\n>>>>>>> other\nd\n", "2:<<<<<<< 4:======= 6:>>>>>>>"},
		{"diff3", "<<<<<<< ours\nb\n||||||| base\nx\n=======\nc\n>>>>>>> theirs\n", "1:<<<<<<< 3:||||||| 5:======= 7:>>>>>>>"},
		{"crlf", "<<<<<<< HEAD\r\nb\r\n=======\r\nc\r\n>>>>>>> o\r\n", "1:<<<<<<< 3:======= 5:>>>>>>>"},
		{"eight is not a marker", "<<<<<<<< x\n>>>>>>>>\n", ""},
		{"no space after", "<<<<<<<HEAD\n", ""},
		{"stray close", "a\n>>>>>>> other\n", "2:>>>>>>>"},
		{"unclosed", "a\n<<<<<<< HEAD\nb\n", "2:<<<<<<<"},
		{"indented is text", "  <<<<<<< HEAD\n", ""},
	}
	for _, tt := range tests {
		marks, _ := findConflicts([]byte(tt.src))
		var got []string
		for _, m := range marks {
			got = append(got, strconv.Itoa(m.line)+":"+m.marker)
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("%s: markers %q, want %q", tt.name, strings.Join(got, " "), tt.want)
		}
	}
}

// TestParseDocSkipsConflictedRegion: the entries around a conflict are
// read whole and end where they end (the line after is not glued onto
// the entry before, as a lazy continuation would), nothing between the
// markers is an entry, and each marker is a Problem with its line.
func TestParseDocSkipsConflictedRegion(t *testing.T) {
	src := "# Core profile\n## User preferences\n- [pref-001] Prefers dark mode (user_explicit · 2026-01-01)\n<<<<<<< HEAD\n- [pref-003] Tabs are two (x)\n=======\n- [pref-002] Tabs are four (x)\n>>>>>>> laptop\n- [pref-004] Uses vim (x · 2026-01-01)\n"
	d := ParseDoc(MainFile, []byte(src))
	var ids []string
	for _, e := range d.Entries {
		ids = append(ids, e.ID+"="+e.Content)
		if strings.Contains(e.Raw, "<<<") || strings.Contains(e.Raw, "Tabs") {
			t.Errorf("entry %s holds conflict text: %q", e.ID, e.Raw)
		}
	}
	if got := strings.Join(ids, "|"); got != "pref-001=Prefers dark mode|pref-004=Uses vim" {
		t.Errorf("entries %s", got)
	}
	if len(d.Conflicts) != 3 || d.Conflicts[0] != (ConflictMarker{MainFile, 4, "<<<<<<<"}) || d.Conflicts[2].Line != 8 {
		t.Errorf("conflicts %+v", d.Conflicts)
	}
	n := 0
	for _, p := range d.Problems {
		if strings.Contains(p.Message, "git conflict marker") {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d marker problems, want 3: %+v", n, d.Problems)
	}
	if err := (&Memory{Main: d, Topics: map[string]*Doc{}}).CheckEditable(); err == nil || !strings.Contains(err.Error(), "MEMORY.md:4") {
		t.Errorf("CheckEditable = %v", err)
	}
}

// BenchmarkFindConflictsClean measures what the marker scan adds to
// reading an 8 MiB memory file that has no markers (every parse and
// every writer's check pays it).
func BenchmarkFindConflictsClean(b *testing.B) {
	var sb strings.Builder
	for i := 0; sb.Len() < 8<<20; i++ {
		sb.WriteString("- [fact-" + strconv.Itoa(i) + "] The report cache is warmed at 06:00 by cron job " + strconv.Itoa(i) + " (ops · 2026-01-02)\n")
	}
	src := []byte(sb.String())
	b.SetBytes(int64(len(src)))
	for b.Loop() {
		if m, _ := findConflicts(src); m != nil {
			b.Fatal(m)
		}
	}
}
