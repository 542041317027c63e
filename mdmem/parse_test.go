package mdmem

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func date(s string) time.Time {
	t, ok := ParseTime(s)
	if !ok {
		panic(s)
	}
	return t
}

func TestParseDesignExample(t *testing.T) {
	src, err := os.ReadFile("testdata/golden/design.md")
	if err != nil {
		t.Fatal(err)
	}
	d := ParseDoc(MainFile, src)
	if len(d.Problems) > 0 {
		t.Fatalf("problems: %v", d.Problems)
	}
	tests := []struct {
		id, category, content, source string
		place                         Place
		created                       string
		conf                          float64
		scope, see                    []string
		supersededBy                  string
	}{
		{"pref-001", "preference", "Example code uses Python 3.11; no Python 2 syntax", "user", PlaceCore, "2026-01-05", -1, nil, nil, ""},
		{"cons-003", "constraint", "The order service must not add synchronous blocking calls", "code review", PlaceCore, "2026-01-08", -1, []string{"project:order-service"}, nil, ""},
		{"dec-014", "decision", "Order cache is two-level: Redis plus a local cache", "session summary", PlaceCore, "2026-01-08", 0.8, nil, nil, ""},
		{"todo-002", "todo", "Has the production database been upgraded to 8.0?", "conflicting sources", PlacePending, "", -1, nil, []string{"dec-009", "fact-031"}, ""},
		{"dec-007", "decision", "Order cache uses Redis only", "session summary", PlaceArchive, "2025-12-01", -1, nil, nil, "dec-014"},
	}
	if len(d.Entries) != len(tests) {
		t.Fatalf("got %d entries, want %d", len(d.Entries), len(tests))
	}
	for i, tt := range tests {
		e := d.Entries[i]
		if e.ID != tt.id || e.Category != tt.category || e.Content != tt.content || e.Source != tt.source || e.Place != tt.place {
			t.Errorf("entry %d = %s/%s/%q/%q/%s, want %s/%s/%q/%q/%s", i, e.ID, e.Category, e.Content, e.Source, e.Place, tt.id, tt.category, tt.content, tt.source, tt.place)
		}
		if tt.created != "" && !e.Created.Equal(date(tt.created)) {
			t.Errorf("%s created = %v, want %s", e.ID, e.Created, tt.created)
		}
		if tt.conf >= 0 && (!e.HasConf || e.Confidence != tt.conf) {
			t.Errorf("%s conf = %v/%v, want %v", e.ID, e.HasConf, e.Confidence, tt.conf)
		}
		if !reflect.DeepEqual(e.Scope, tt.scope) || !reflect.DeepEqual(e.See, tt.see) || e.SupersededBy != tt.supersededBy {
			t.Errorf("%s scope/see/superseded = %v/%v/%q", e.ID, e.Scope, e.See, e.SupersededBy)
		}
	}
	wantIndex := []IndexLine{{"Databases and middleware", "topics/db-notes.md", 12}, {"Historical incidents and fixes", "topics/incidents.md", 13}}
	if !reflect.DeepEqual(d.Index, wantIndex) {
		t.Errorf("index = %+v", d.Index)
	}
}

func TestParseOddContent(t *testing.T) {
	src, err := os.ReadFile("testdata/golden/odd.md")
	if err != nil {
		t.Fatal(err)
	}
	d := ParseDoc(MainFile, src)
	var got []string
	for _, e := range d.Entries {
		got = append(got, e.ID+"@"+string(e.Place))
	}
	want := []string{"pref-001@core", "pref-002@core", "@core", "pref-003@core", "cons-001@core", "cons-002@core", "dec-001@core", "note-001@other", "dec-000@archive"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("entries = %v\nwant      %v", got, want)
	}
	p3 := d.Entries[3]
	if !p3.Nested || !strings.Contains(p3.Raw, "pref-998") || strings.Contains(p3.Raw, "pref-997") {
		t.Errorf("pref-003 raw = %q", p3.Raw)
	}
	if d.Entries[1].Source != "" || d.Entries[1].Content != "An entry without metadata" {
		t.Errorf("pref-002 = %+v", d.Entries[1])
	}
	if e := d.Entries[5]; !reflect.DeepEqual(e.Scope, []string{"project:a", "project:b"}) {
		t.Errorf("cons-002 scope = %v", e.Scope)
	}
	if e := d.Entries[6]; !reflect.DeepEqual(e.Refs, []string{"https://example.com/a?b=c", "D1:3"}) || e.Category != "decision" {
		t.Errorf("dec-001 = %+v", e)
	}
	// Every entry's Raw is exactly its bytes, and ranges do not overlap.
	prev := 0
	for _, e := range d.Entries {
		if e.Start < prev || e.End < e.Start || string(src[e.Start:e.End]) != e.Raw {
			t.Errorf("%s: bad range %d..%d", e.ID, e.Start, e.End)
		}
		prev = e.End
	}
}

func TestParseCRLFAndFrontMatter(t *testing.T) {
	src, _ := os.ReadFile("testdata/golden/crlf.md")
	d := ParseDoc(MainFile, src)
	if len(d.Entries) != 3 || d.Entries[0].Content != "Tabs, not spaces — 用制表符" || d.Entries[2].Category != "decision" {
		t.Fatalf("entries = %+v", d.Entries)
	}
	topic := "---\ndescription: Databases and middleware\nkeywords: [postgres, redis]\n---\n# DB\n\n- [fact-001] PG 16 (notes · 2026-01-01)\n"
	td := ParseDoc("topics/db.md", []byte(topic))
	if td.Front == nil || td.Front.Description != "Databases and middleware" || !reflect.DeepEqual(td.Front.Keywords, []string{"postgres", "redis"}) {
		t.Errorf("front = %+v", td.Front)
	}
	if len(td.Entries) != 1 || td.Entries[0].Place != PlaceTopic || td.Entries[0].Topic != "db" || td.Entries[0].Line != 7 {
		t.Errorf("entries = %+v", td.Entries)
	}
	bad := ParseDoc("topics/x.md", []byte("---\ndescription: [unclosed\n---\n- [fact-1] x\n"))
	if len(bad.Problems) == 0 || len(bad.Entries) != 1 {
		t.Errorf("bad front matter: problems %v entries %d", bad.Problems, len(bad.Entries))
	}
}

func TestTrailer(t *testing.T) {
	tests := []struct {
		text, content, source string
		notes                 []string
		problems              int
	}{
		{"Plain content", "Plain content", "", nil, 0},
		{"See RFC 7231 (section 6)", "See RFC 7231 (section 6)", "", nil, 0},
		{"Dated (2026-01-02)", "Dated", "", nil, 0},
		{"Nested (a (b) c) (user · 2026-01-02)", "Nested (a (b) c)", "user", nil, 0},
		{"X (user · conf 2 · 2026-01-02)", "X", "user", []string{"conf 2"}, 1},
		{"X (user · free note · updated never)", "X", "user", []string{"free note", "updated never"}, 1},
	}
	for _, tt := range tests {
		var e Entry
		probs := parseItemText(tt.text, len(tt.text), &e, nil)
		if e.Content != tt.content || e.Source != tt.source || !reflect.DeepEqual(e.Notes, tt.notes) || len(probs) != tt.problems {
			t.Errorf("%q → content %q source %q notes %v problems %v", tt.text, e.Content, e.Source, e.Notes, probs)
		}
	}
}

func TestRenderRoundTrip(t *testing.T) {
	c := 0.75
	entries := []*Entry{
		{ID: "pref-001", Category: "preference", Content: "Tabs (not spaces) · always", Source: "user (chat)", Created: date("2026-01-05T10:12:00Z")},
		{ID: "dec-014", Category: "decision", Content: "Redis + local cache", Source: "session_summary", Created: date("2026-01-08"), Updated: date("2026-01-09"),
			Scope: []string{"project:order-service"}, Confidence: c, HasConf: true, Refs: []string{"session:1", "D1:3"}, Tags: []string{"cache"}},
		{ID: "dec-007", Category: "decision", Content: "Redis only", Source: "s", Created: date("2025-12-01"), SupersededBy: "dec-014", SupersededOn: date("2026-01-08"), See: []string{"todo-002"}, Notes: []string{"pending user confirmation"}},
		{ID: "fact-100", Category: "fact", Content: "多行\n内容 with CJK 中文", Expires: date("2027-01-01")},
	}
	for _, e := range entries {
		line := e.Render()
		d := ParseDoc("topics/t.md", []byte(line))
		if len(d.Entries) != 1 {
			t.Fatalf("%q parsed to %d entries", line, len(d.Entries))
		}
		g := d.Entries[0]
		again := g.Render()
		if again != line {
			t.Errorf("render not stable:\n %q\n %q", line, again)
		}
		if g.ID != e.ID || g.Content != strings.ReplaceAll(OneLine(e.Content), "·", "·") || !g.Created.Equal(e.Created) || g.HasConf != e.HasConf ||
			!reflect.DeepEqual(g.Scope, e.Scope) || !reflect.DeepEqual(g.Refs, e.Refs) || g.SupersededBy != e.SupersededBy || !g.Expires.Equal(e.Expires) {
			t.Errorf("round trip lost data:\n in  %+v\n out %+v", e, g)
		}
	}
}

func TestIDs(t *testing.T) {
	for id, ok := range map[string]bool{"pref-001": true, "dec-14": true, "lesson-1000": true, "x1-2": true, "-1": false, "pref-": false, "Pref-1": false, "pref-1a": false, "a/b-1": false, "1a-2": false} {
		if IsValidID(id) != ok {
			t.Errorf("IsValidID(%q) = %v", id, !ok)
		}
	}
	if FormatID("dec", 14) != "dec-014" || FormatID("dec", 1234) != "dec-1234" {
		t.Error("FormatID")
	}
}

func TestSlugs(t *testing.T) {
	for slug, ok := range map[string]bool{"db-notes": true, "a": true, "../x": false, "a/b": false, ".hidden": false, "Caps": false, "-x": false, "": false, "x.md": false, "%2e%2e": false} {
		if (ValidSlug(slug) == nil) != ok {
			t.Errorf("ValidSlug(%q) ok = %v", slug, !ok)
		}
	}
	if Slugify("Databases & Middleware!") != "databases-middleware" || Slugify("../../etc") != "etc" {
		t.Errorf("Slugify: %q %q", Slugify("Databases & Middleware!"), Slugify("../../etc"))
	}
}

func readGolden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "golden", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestRenderEscapesTrailerLikeContent(t *testing.T) {
	for _, e := range []*Entry{
		{ID: "note-001", Content: "Looks like (user · 2026-01-01)"},
		{ID: "note-002", Content: "Only a source", Source: "user"},
		{ID: "note-003", Content: "Ends (conf 0.5)", Source: "a", Created: date("2026-01-01")},
	} {
		line := e.Render()
		g := ParseDoc("topics/t.md", []byte(line)).Entries[0]
		if g.Content != e.Content || g.Source != e.Source || g.Render() != line {
			t.Errorf("%q → content %q source %q", line, g.Content, g.Source)
		}
	}
}

func TestParseTime(t *testing.T) {
	tests := map[string]string{
		"2026-01-05":                "2026-01-05T00:00:00Z",
		"2026-01-05T10:12:00Z":      "2026-01-05T10:12:00Z",
		"2026-01-05T10:12Z":         "2026-01-05T10:12:00Z",
		"2026-01-05 10:12":          "2026-01-05T10:12:00Z",
		"2026-01-05T12:12:00+02:00": "2026-01-05T10:12:00Z",
		"2026-02-30":                "",
		"2026-13-01":                "",
		"2026-01-05T24:00:00Z":      "",
		"2026-1-5":                  "",
		"20260105":                  "",
		"2026-01-0x":                "",
	}
	for in, want := range tests {
		got, ok := ParseTime(in)
		if want == "" {
			if ok {
				t.Errorf("ParseTime(%q) = %v, want failure", in, got)
			}
			continue
		}
		if !ok || got.Format(time.RFC3339) != want {
			t.Errorf("ParseTime(%q) = %v, %v; want %s", in, got, ok, want)
		}
	}
}

// TestOneLineShortcutKeepsItsResult: OneLine returns a text that is
// already one line as it is, and every other text as strings.Fields
// joins it (random texts of words, ASCII and Unicode white space).
func TestOneLineShortcutKeepsItsResult(t *testing.T) {
	parts := []string{"a", "word", "ü", " ", "  ", "\t", "\n", "\u00a0", "\u2028", "\u0085", "\xff"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		var b strings.Builder
		for range rng.IntN(8) {
			b.WriteString(parts[rng.IntN(len(parts))])
		}
		s := b.String()
		if got, want := OneLine(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("OneLine(%q) = %q, want %q", s, got, want)
		}
	}
}
