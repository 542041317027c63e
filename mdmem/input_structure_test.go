package mdmem

// A seventh review (2026-12-03, hostile tester): input, limits and the
// file structure. Each test fails on the code before its fix.

import (
	"strings"
	"testing"
	"time"
)

// TestInsertUnderAPersonsParagraphKeepsItOut: a person wrote an
// introductory paragraph right under a core heading, with no entries yet.
// memctl inserts the new entry right after the heading, before the
// paragraph, with no blank line: the paragraph becomes a lazy
// continuation of the new list item, so the entry's content silently
// absorbs the person's prose (and forgetting the entry deletes it).
func TestInsertUnderAPersonsParagraphKeepsItOut(t *testing.T) {
	src := "# Core profile\n\n## Key decisions\nDecisions the team agreed on, newest last.\n\n## Pending confirmation\n\n# Archive\n"
	m := memoryFrom(t, map[string]string{MainFile: src})
	ed := m.Edit()
	must(t, ed.Insert(&Entry{ID: "dec-009", Category: "decision", Content: "New dec", Source: "agent"}, Target{Place: PlaceCore}))
	out, err := ed.Changed()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("written:\n%s", out[MainFile])
	m2 := memoryFrom(t, map[string]string{MainFile: string(out[MainFile])})
	e := m2.Find("dec-009")
	if e == nil {
		t.Fatal("dec-009 not found")
	}
	if e.Content != "New dec" {
		t.Errorf("dec-009 read back with content %q, want %q", e.Content, "New dec")
	}
	if strings.Contains(e.Raw, "Decisions the team agreed on") {
		t.Errorf("the person's paragraph is now part of entry dec-009 (removing the entry would delete it): raw %q", e.Raw)
	}
}

// TestJSONRepeatedOrMiscasedFieldIsRefused: a JSON Lines object that gives
// "content" twice (or "Content" and "content": encoding/json matches keys
// case-insensitively) is accepted, and the first value is silently
// dropped: the input is not one object with the schema's fields, yet the
// line is queued with exit 0 and no report.
func TestJSONRepeatedOrMiscasedFieldIsRefused(t *testing.T) {
	for _, line := range []string{
		`{"content":"Deploys need a change ticket","category":"constraint","content":"x"}`,
		`{"Content":"Deploys need a change ticket","category":"constraint","content":"x"}`,
		`{"content":"Deploys need a change ticket","category":"constraint","scope":"project:a","SCOPE":"project:b"}`,
	} {
		var got *Candidate
		var gotErr error
		err := DecodeJSONLines(strings.NewReader(line+"\n"), 1<<20, func(_ int, c *Candidate, err error) error {
			got, gotErr = c, err
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if gotErr == nil {
			t.Errorf("%s: accepted as content %q scope %q; a repeated field should be refused, not silently dropped", line, got.Content, got.Scope)
		}
	}
	// Every field of the schema, each once, is still accepted.
	line := `{"content":"Deploys need a change ticket","category":"constraint","scope":"project:a","source":"user","refs":["r"],"tags":["t"],"topic":"deploys","confidence":0.9,"created_at":"2026-01-01T00:00:00Z"}`
	err := DecodeJSONLines(strings.NewReader(line+"\n"), 1<<20, func(_ int, _ *Candidate, err error) error {
		if err != nil {
			t.Errorf("a plain line is refused: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestSourceAndRefsRoundTrip: fields that Normalize accepts come back
// different once the entry is written and read: parentheses in a ref
// (a Wikipedia URL) become brackets, a source that reads like a trailer
// key turns into that key (an expiry, a scope), with exit 0.
func TestSourceAndRefsRoundTrip(t *testing.T) {
	now := mustTime(t, "2026-01-05T10:12:00Z")
	for _, tc := range []struct {
		name string
		c    Candidate
	}{
		{"ref with parentheses", Candidate{Content: "Python is a language", Category: "fact", Refs: Strings{"https://en.wikipedia.org/wiki/Python_(programming_language)"}}},
		{"ref with comma", Candidate{Content: "Bug in parser", Category: "fact", Refs: Strings{"file:parse.go:10,20"}}},
		{"source like an expiry", Candidate{Content: "Staging is frozen", Category: "fact", Source: "expires 2026-02-01"}},
		{"source like a scope", Candidate{Content: "Staging is frozen", Category: "fact", Source: "scope project:x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			if err := c.Normalize(now, 4096, nil); err != nil {
				t.Skipf("refused (fine): %v", err)
			}
			e := c.Entry("fact-001")
			line := e.Render()
			d := ParseDoc("topics/x.md", []byte("# X\n\n"+line))
			if len(d.Entries) != 1 {
				t.Fatalf("%d entries", len(d.Entries))
			}
			g := d.Entries[0]
			if g.Source != c.Source || strings.Join(g.Refs, "|") != strings.Join(c.Refs, "|") || len(g.Scope) != 0 || !g.Expires.IsZero() {
				t.Errorf("written %q\nread back source %q refs %q scope %q expires %v; queued source %q refs %q", line, g.Source, g.Refs, g.Scope, g.Expires, c.Source, c.Refs)
			}
		})
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// TestQueueFileIsAlwaysReadBack: add.max_content_bytes has no
// upper bound, and Enqueue marshals with HTML escaping ("<" → \u003c, six
// bytes for one): a candidate Normalize accepted is written to a queue
// file over readCandidate's 1 MiB limit, which ReadQueue then refuses.
func TestQueueFileIsAlwaysReadBack(t *testing.T) {
	dir := t.TempDir()
	now := mustTime(t, "2026-01-05T10:12:00Z")
	c := &Candidate{Content: "Generic syntax: " + strings.Repeat("<", 200_000), Category: "fact"}
	if err := c.Normalize(now, 1<<20, nil); err != nil { // add.max_content_bytes = 1048576
		t.Fatal(err)
	}
	ids, err := Enqueue(t.Context(), dir, []*Candidate{c}, now)
	if err != nil {
		t.Fatalf("refused before writing (fine): %v", err)
	}
	got, bad, err := ReadQueue(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || len(bad) != 0 {
		t.Errorf("queued %v, read back %d candidates; unreadable: %v", ids, len(got), bad)
	}
}
