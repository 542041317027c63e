package consolidate

import (
	"math"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// Use is how often and how recently the agent reported using an entry
// (`memctl used`, the "used" records of .memctl/cache/inject.log).
type Use struct {
	Count int       `json:"count"`
	Last  time.Time `json:"last"`
	// Weight is the count with every use decayed by its age (half-life
	// usageHalfLife): ten uses last week weigh more than ten last year.
	Weight float64 `json:"weight"`
}

// UsageInfo tells what the inject log contributed to a run.
type UsageInfo struct {
	Records    int    `json:"records"`          // "used" records read
	Entries    int    `json:"entries"`          // distinct entry ids used
	Unreadable int    `json:"unreadable_lines"` // lines skipped (torn, not JSON, unknown kind)
	Error      string `json:"error,omitempty"`  // the log could not be read (usage then ignored in part or whole)
}

const (
	// usageHalfLife is the age at which a use counts half.
	usageHalfLife = 90 * 24 * time.Hour
	// usageScale and usageCap shape the value bonus of use:
	// usageScale·ln(1+weight), at most usageCap. One use this week adds
	// about 0.28, five about 0.72, twenty or more 1.2: more than the
	// spread of confidence and category weights, so entries the agent
	// uses stay in the core.
	usageScale = 0.4
	usageCap   = 1.2
)

// ReadUsage reads the per-entry use counts from the inject log of the
// memory in dir with mdmem.ReadUsageLog (tolerant: unreadable lines are
// skipped). Uses dated after now count as now. A log that cannot be read
// yields what was read before the fault and the error in info.
func ReadUsage(dir string, now time.Time) (map[string]Use, UsageInfo) {
	recs, bad, err := mdmem.ReadUsageLog(dir)
	info := UsageInfo{Unreadable: bad}
	if err != nil {
		info.Error = err.Error()
	}
	return usageFrom(recs, now, &info), info
}

func usageFrom(recs []mdmem.UsageRecord, now time.Time, info *UsageInfo) map[string]Use {
	out := map[string]Use{}
	for _, r := range recs {
		if r.Kind != mdmem.UsageUsed {
			continue
		}
		info.Records++
		t := r.Time
		if t.IsZero() || t.After(now) {
			t = now
		}
		w := math.Exp2(-float64(now.Sub(t)) / float64(usageHalfLife))
		seen := map[string]bool{}
		for _, id := range r.IDs {
			if id == "" || seen[id] {
				continue
			}
			seen[id] = true
			u := out[id]
			u.Count++
			u.Weight += w
			if t.After(u.Last) {
				u.Last = t
			}
			out[id] = u
		}
	}
	info.Entries = len(out)
	return out
}

// bonus is the value use adds to an entry.
func (u Use) bonus() float64 {
	if u.Weight <= 0 {
		return 0
	}
	return min(usageScale*math.Log1p(u.Weight), usageCap)
}
