package mdmem

import (
	"strings"
	"testing"
)

// TestReviewA_InsertIntoSectionWithIntroParagraph: a person wrote an
// introductory paragraph right under a core heading, with no entries yet.
// memctl inserts the new entry right after the heading, before the
// paragraph, with no blank line: the paragraph becomes a lazy
// continuation of the new list item, so the entry's content silently
// absorbs the person's prose (and forgetting the entry deletes it).
func TestReviewA_InsertIntoSectionWithIntroParagraph(t *testing.T) {
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

// TestReviewA_JSONDuplicateKeyDropsValue: a JSON Lines object that gives
// "content" twice (or "Content" and "content": encoding/json matches keys
// case-insensitively) is accepted, and the first value is silently
// dropped: the input is not one object with the schema's fields, yet the
// line is queued with exit 0 and no report.
func TestReviewA_JSONDuplicateKeyDropsValue(t *testing.T) {
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
}
