package inject

import (
	"strconv"
	"strings"
	"time"
)

// dateBoost is the share of the best score a matching note gains when the
// task names a month (and year) its date falls in: a date named in the
// question counts like one more well-matched word.
const dateBoost = 0.25

var monthNames = map[string]time.Month{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8,
	"september": 9, "sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
}

// taskDates finds the months and years a task names: "in June", "July
// 2023", "October 13, 2023", "in 2023". "May" (and the short names) count
// only next to a number or after "in", "of" or "since", where they cannot
// be a verb or another word.
func taskDates(task string) (months map[time.Month]bool, years map[int]bool) {
	words := strings.FieldsFunc(strings.ToLower(task), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	})
	isNum := func(i int) bool {
		if i < 0 || i >= len(words) {
			return false
		}
		_, err := strconv.Atoi(words[i])
		return err == nil
	}
	for i, w := range words {
		if m, ok := monthNames[w]; ok {
			full := len(w) > 4 && w != "sept"
			prep := i > 0 && (words[i-1] == "in" || words[i-1] == "of" || words[i-1] == "since")
			if full && w != "may" || isNum(i-1) || isNum(i+1) || prep {
				if months == nil {
					months = map[time.Month]bool{}
				}
				months[m] = true
			}
		}
		if len(w) == 4 && (strings.HasPrefix(w, "19") || strings.HasPrefix(w, "20")) {
			if y, err := strconv.Atoi(w); err == nil {
				if years == nil {
					years = map[int]bool{}
				}
				years[y] = true
			}
		}
	}
	return months, years
}

// boostDates raises the notes that already match the task and whose date
// falls in a month (and year) the task names.
func (c *Corpus) boostDates(task string, scores []float64) {
	months, years := taskDates(task)
	if months == nil && years == nil {
		return
	}
	top := 0.0
	for _, s := range scores {
		top = max(top, s)
	}
	for d, s := range scores {
		if s <= 0 {
			continue
		}
		t := c.date(d)
		if t.IsZero() {
			continue
		}
		if (months == nil || months[t.Month()]) && (years == nil || years[t.Year()]) {
			scores[d] += dateBoost * top
		}
	}
}
