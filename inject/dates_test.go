package inject

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

func TestTaskDates(t *testing.T) {
	for _, tc := range []struct{ task, months, years, days string }{
		{"When did Melanie go camping in June?", "[June]", "[]", "[]"},
		{"What setback did she face in October 2023?", "[October]", "[2023]", "[]"},
		{"What did she show on October 13, 2023?", "[October]", "[2023]", "[October 13]"},
		{"How many times in 2023?", "[]", "[2023]", "[]"},
		{"You may add a note about the mar key", "[]", "[]", "[]"},
		{"Since may the cache is two-level", "[May]", "[]", "[]"},
		{"Met on 3 May", "[May]", "[]", "[May 3]"},
		{"What book did Tim finish on 8th December, 2023?", "[December]", "[2023]", "[December 8]"},
		{"the 21st of June and June 2nd", "[June]", "[]", "[June 2 June 21]"},
		{"Where was he between August 11 and August 15 2023?", "[August]", "[2023]", "[August 11 August 15]"},
		{"Where was the picture of December 1,2023 taken?", "[December]", "[2023]", "[December 1]"},
		{"in 40 June days, 2 weeks after June", "[June]", "[]", "[]"},
	} {
		m, y, d := taskDates(tc.task)
		var ds []string
		for mo := time.January; mo <= time.December; mo++ {
			for day := 1; day <= 31; day++ {
				if d[monthDay{mo, day}] {
					ds = append(ds, fmt.Sprint(mo, " ", day))
				}
			}
		}
		if got := "[" + strings.Join(ds, " ") + "]"; got != tc.days {
			t.Errorf("%q: days %s, want %s", tc.task, got, tc.days)
		}
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

// TestDayBoost: of notes matching the words alike, the one dated the day
// the task names ranks above one of another day of that month.
func TestDayBoost(t *testing.T) {
	c := loadMem(t, map[string]string{"topics/t.md": "# T\n\n" +
		"- [fact-001] Maria shared news about her new job (conversation · 2023-06-03)\n" +
		"- [fact-002] Maria shared news about her new gym (conversation · 2023-06-16)\n" +
		"- [fact-003] Maria shared news about her new car (conversation · 2023-06-28)\n"})
	for _, tc := range []struct{ task, want string }{
		{"What news did Maria share on 16 June, 2023?", "fact-002"},
		{"What news did Maria share on June 28th?", "fact-003"},
		{"What news did Maria share on the 3rd of June?", "fact-001"},
	} {
		hits := c.Rank(Rankers[DefaultRanker], tc.task, nil, nil)
		if len(hits) != 3 || c.Note(hits[0].Doc).ID != tc.want {
			var got []string
			for _, h := range hits {
				got = append(got, c.Note(h.Doc).ID)
			}
			t.Errorf("%q: %v, want %s first", tc.task, got, tc.want)
		}
	}
}
