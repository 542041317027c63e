package mdmem

import (
	"fmt"
	"time"
)

// MinDate is the earliest date memctl accepts in input: nothing a memory
// records can predate 1970.
var MinDate = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

// MaxFuture is how far past now a date in input may lie (clock skew,
// time zones); anything later is a mistake and is refused.
const MaxFuture = 24 * time.Hour

// CheckDate refuses a date of input (created_at, updated_at) that is before
// 1970-01-01 or more than a day after now. A zero date (absent) is fine.
func CheckDate(what string, t, now time.Time) error {
	switch {
	case t.IsZero():
		return nil
	case t.Before(MinDate):
		return fmt.Errorf("%s %s is before 1970-01-01; give the real date or leave it out", what, t.UTC().Format(time.RFC3339))
	case t.After(now.Add(MaxFuture)):
		return fmt.Errorf("%s %s is in the future (now is %s); give the real date or leave it out", what, t.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}

// TrustedDate is t for comparing recency at now: a date after now (a
// hand-written entry's typo, say 9999-01-01) cannot be trusted and counts
// as no date, so it cannot make an entry look newer than every later
// update. (Counting it as now would not do: updates are queued before the
// run that applies them, so they would still look older.)
func TrustedDate(t, now time.Time) time.Time {
	if t.After(now) {
		return time.Time{}
	}
	return t
}
