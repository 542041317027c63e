package inject

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestTaskDates(t *testing.T) {
	for _, tc := range []struct{ task, months, years string }{
		{"When did Melanie go camping in June?", "[June]", "[]"},
		{"What setback did she face in October 2023?", "[October]", "[2023]"},
		{"What did she show on October 13, 2023?", "[October]", "[2023]"},
		{"How many times in 2023?", "[]", "[2023]"},
		{"You may add a note about the mar key", "[]", "[]"},
		{"Since may the cache is two-level", "[May]", "[]"},
		{"Met on 3 May", "[May]", "[]"},
	} {
		m, y := taskDates(tc.task)
		var ms, ys []string
		for mo := time.January; mo <= time.December; mo++ {
			if m[mo] {
				ms = append(ms, mo.String())
			}
		}
		for yr := 1900; yr < 2100; yr++ {
			if y[yr] {
				ys = append(ys, fmt.Sprint(yr))
			}
		}
		if got := "[" + strings.Join(ms, " ") + "]"; got != tc.months {
			t.Errorf("%q: months %s, want %s", tc.task, got, tc.months)
		}
		if got := "[" + strings.Join(ys, " ") + "]"; got != tc.years {
			t.Errorf("%q: years %s, want %s", tc.task, got, tc.years)
		}
	}
}

// TestDateBoost: of two notes matching the words alike, the one dated in
// the month the task names ranks first; a date alone matches nothing.
func TestDateBoost(t *testing.T) {
	c := loadMem(t, map[string]string{"topics/t.md": "# T\n\n" +
		"- [fact-001] Melanie went camping with the kids (conversation · 2023-07-10)\n" +
		"- [fact-002] Melanie went camping with the kids (conversation · 2023-06-27)\n" +
		"- [fact-003] Caroline adopted a dog (conversation · 2023-06-01)\n"})
	hits := c.Rank(Rankers[DefaultRanker], "When did Melanie go camping in June?", nil, nil)
	if len(hits) < 2 || c.Note(hits[0].Doc).ID != "fact-002" {
		t.Fatalf("June note not first: %v", hits)
	}
	for _, h := range hits {
		if c.Note(h.Doc).ID == "fact-003" {
			t.Errorf("a note matching only by date was retrieved")
		}
	}
	hits = c.Rank(Rankers[DefaultRanker], "When did Melanie go camping in July?", nil, nil)
	if c.Note(hits[0].Doc).ID != "fact-001" {
		t.Errorf("July note not first: %v", hits)
	}
}
