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

// monthDay is a day a task names without its year or with it: "16 June",
// "June 16th", "8th of December".
type monthDay struct {
	m time.Month
	d int
}

// dayNumber reads a day of the month: 1 to 31, bare or ordinal ("8th",
// "21st").
func dayNumber(w string) (int, bool) {
	for _, suf := range []string{"st", "nd", "rd", "th"} {
		if t, ok := strings.CutSuffix(w, suf); ok {
			w = t
			break
		}
	}
	if len(w) == 0 || len(w) > 2 {
		return 0, false
	}
	d, err := strconv.Atoi(w)
	return d, err == nil && d >= 1 && d <= 31
}

// taskDates finds the months, years and days a task names: "in June",
// "July 2023", "October 13, 2023" (a day, its month and year), "on 8th
// of December", "in 2023". "May" (and the short names) count only next
// to a number or after "in", "of" or "since", where they cannot be a verb
// or another word. A day is a number of 1 to 31, bare or ordinal, just
// before or after a month's name, or before "of" and the name.
func taskDates(task string) (months map[time.Month]bool, years map[int]bool, days map[monthDay]bool) {
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
			for _, j := range []int{i - 1, i + 1, i - 2} {
				if j < 0 || j >= len(words) || j == i-2 && words[i-1] != "of" {
					continue
				}
				if d, ok := dayNumber(words[j]); ok {
					if days == nil {
						days = map[monthDay]bool{}
					}
					days[monthDay{m, d}] = true
					if months == nil {
						months = map[time.Month]bool{}
					}
					months[m] = true
				}
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
	return months, years, days
}

// boostDates raises the notes that already match the task and whose date
// falls in a month (and year) the task names, and those of a day it names
// twice as much.
func (c *Corpus) boostDates(task string, scores []float64) {
	months, years, days := taskDates(task)
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
			if days[monthDay{t.Month(), t.Day()}] {
				scores[d] += dateBoost * top // the day too: one more word
			}
		}
	}
}
