package inject

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// Stats is memctl stats: size against budgets, quality, usage (the seed's
// evaluation section).
type Stats struct {
	Entries  int            `json:"entries"`
	ByPlace  map[string]int `json:"by_place"`
	Sections map[string]int `json:"sections"` // MEMORY.md section title → entries
	Topics   map[string]int `json:"topics"`   // topic slug → entries

	Core struct {
		Entries     int `json:"entries"`
		Lines       int `json:"lines"`
		Bytes       int `json:"bytes"`
		Tokens      int `json:"tokens"`
		MaxLines    int `json:"max_lines"`
		MaxBytes    int `json:"max_bytes"`
		MaxTokens   int `json:"max_tokens"`   // core_max_tokens
		TokenBudget int `json:"token_budget"` // room for the core in a block: budget less the L2 reserve and frame, at most max_tokens
		Fit         int `json:"fit"`          // core entries L1 holds at the configured budget
	} `json:"core"`
	Warnings []string `json:"warnings"`

	PendingShare float64  `json:"pending_share"`
	StaleDays    int      `json:"stale_days"`
	Stale        int      `json:"stale"`
	StaleShare   float64  `json:"stale_share"`
	Conflicting  []string `json:"conflicting_ids"` // pending entries and entries with see links
	Superseded   int      `json:"superseded"`

	Log struct {
		Enabled      bool    `json:"enabled"`
		Injects      int     `json:"injects"`
		AvgTokens    float64 `json:"avg_tokens"`
		MaxTokens    int     `json:"max_tokens"`
		InjectedIDs  int     `json:"injected_ids"`
		UsedReports  int     `json:"used_reports"`
		UsedIDs      int     `json:"used_ids"`
		HitRate      float64 `json:"hit_rate"` // used ids / injected ids
		BadLines     int     `json:"unreadable_lines"`
		FirstRecord  string  `json:"first_at,omitempty"`
		LastRecord   string  `json:"last_at,omitempty"`
		OmittedTotal int     `json:"omitted_total"`
	} `json:"log"`

	Tokenizer string `json:"tokenizer"`
	Now       string `json:"now"`
}

// StatsCounter measures a memory one file at a time: Add each file in
// mdmem.Walk's order (MEMORY.md first), then ask for the Stats. Of the
// files it keeps counts, the references of conflicting entries and the
// notes of MEMORY.md (the core is there), nothing of the topic files.
type StatsCounter struct {
	o             Options
	s             *Stats
	main          *Corpus // the notes of MEMORY.md
	pending, live int
}

// NewStatsCounter starts measuring under the inject options (budget, core
// limits, stale days, tokenizer).
func NewStatsCounter(o Options) *StatsCounter {
	s := &Stats{ByPlace: map[string]int{}, Sections: map[string]int{}, Topics: map[string]int{}, StaleDays: o.StaleDays, Tokenizer: o.Counter.Name()}
	if !o.Now.IsZero() {
		s.Now = mdmem.FormatTime(o.Now)
	}
	return &StatsCounter{o: o, s: s, main: &Corpus{}}
}

// Add counts the entries of one memory file. It keeps nothing that points
// into d, except of MEMORY.md.
func (sc *StatsCounter) Add(d *mdmem.Doc) {
	s, o := sc.s, sc.o
	if d.Path == mdmem.MainFile {
		sc.main.addDoc(d)
	}
	for _, e := range d.Entries {
		s.Entries++
		s.ByPlace[string(e.Place)]++
		if e.Topic != "" {
			s.Topics[strings.Clone(e.Topic)]++
		} else {
			s.Sections[strings.Clone(e.Section)]++
		}
		if e.SupersededBy != "" {
			s.Superseded++
		}
		if e.Place == mdmem.PlacePending {
			sc.pending++
		}
		if e.Place == mdmem.PlacePending || len(e.See) > 0 {
			n := Note{ID: e.ID, File: e.File, Line: e.Line}
			s.Conflicting = append(s.Conflicting, strings.Clone(n.Ref()))
		}
		if e.Place == mdmem.PlaceCore || e.Place == mdmem.PlaceTopic || e.Place == mdmem.PlacePending {
			sc.live++
			if d := e.Date(); o.StaleDays > 0 && !o.Now.IsZero() && !d.IsZero() && o.Now.Sub(d) > time.Duration(o.StaleDays)*24*time.Hour {
				s.Stale++
			}
		}
	}
}

// Stats returns the measures of the files added, with the log records if
// any.
func (sc *StatsCounter) Stats(recs []mdmem.UsageRecord, bad int, logEnabled bool) *Stats {
	s, o, c := sc.s, sc.o, sc.main
	c.init()
	s.Core.MaxLines, s.Core.MaxBytes, s.Core.MaxTokens = o.CoreMaxLines, o.CoreMaxBytes, o.CoreMaxTokens
	s.Core.TokenBudget = CoreRoom(o)
	s.Warnings = []string{}
	var core []int
	for i := 0; i < c.Len(); i++ {
		if n := c.Note(i); n.Place == mdmem.PlaceCore && n.SupersededBy == "" {
			core = append(core, i)
		}
	}
	if s.Entries > 0 {
		s.PendingShare = float64(sc.pending) / float64(s.Entries)
	}
	if sc.live > 0 {
		s.StaleShare = float64(s.Stale) / float64(sc.live)
	}
	if s.Conflicting == nil {
		s.Conflicting = []string{}
	}
	// The core as CoreTokens counts it (date lines with their year), the
	// measure consolidate keeps under core_max_tokens.
	co := o
	co.NoTodayLine = true
	cs := c.coreSize(core, &co, c.tokens(o.Counter, false))
	s.Core.Entries, s.Core.Lines, s.Core.Bytes, s.Core.Tokens = cs.Entries, cs.Lines, cs.Bytes, cs.Tokens
	if w := CoreFitWarning(cs.Tokens, o); w != "" {
		s.Warnings = append(s.Warnings, w)
	}
	// How many core entries L1 holds: inject with no task, everything in
	// scope (only MEMORY.md's notes: L1 is the core, and a core entry's
	// id is the first of its kind or a duplicate of one in MEMORY.md).
	fo := o
	fo.Task, fo.Tags, fo.Scopes, fo.TopK = "", nil, []string{ScopeAll}, 0
	if r, err := Inject(c, fo); err == nil {
		for _, it := range r.Items {
			if it.Note.Place == mdmem.PlaceCore {
				s.Core.Fit++
			}
		}
	}
	s.Log.Enabled = logEnabled
	s.Log.BadLines = bad
	sort.SliceStable(recs, func(i, j int) bool { return recs[i].Time.Before(recs[j].Time) })
	for _, r := range recs {
		switch r.Kind {
		case "inject":
			s.Log.Injects++
			s.Log.AvgTokens += float64(r.Tokens)
			s.Log.MaxTokens = max(s.Log.MaxTokens, r.Tokens)
			s.Log.InjectedIDs += len(r.IDs)
			s.Log.OmittedTotal += r.Omitted
		case "used":
			s.Log.UsedReports++
			s.Log.UsedIDs += len(r.IDs)
		}
	}
	if s.Log.Injects > 0 {
		s.Log.AvgTokens /= float64(s.Log.Injects)
	}
	if s.Log.InjectedIDs > 0 {
		s.Log.HitRate = math.Min(1, float64(s.Log.UsedIDs)/float64(s.Log.InjectedIDs))
	}
	if len(recs) > 0 {
		s.Log.FirstRecord = mdmem.FormatTime(recs[0].Time.Truncate(time.Second))
		s.Log.LastRecord = mdmem.FormatTime(recs[len(recs)-1].Time.Truncate(time.Second))
	}
	return s
}

// WriteText prints the stats for people.
func (s *Stats) WriteText(w io.Writer) {
	pct := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	fmt.Fprintf(w, "entries: %d (core %d, topic %d, pending %d, archive %d, other %d)\n", s.Entries,
		s.ByPlace["core"], s.ByPlace["topic"], s.ByPlace["pending"], s.ByPlace["archive"], s.ByPlace["other"])
	fmt.Fprintf(w, "core: %d lines of %d, %d bytes of %d, %d tokens of %d (%s); L1 holds %d of %d entries\n",
		s.Core.Lines, s.Core.MaxLines, s.Core.Bytes, s.Core.MaxBytes, s.Core.Tokens, s.Core.TokenBudget, s.Tokenizer, s.Core.Fit, s.Core.Entries)
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
	fmt.Fprintln(w, "sections:")
	for _, k := range sortedKeys(s.Sections) {
		fmt.Fprintf(w, "  %-28s %d\n", k, s.Sections[k])
	}
	if len(s.Topics) > 0 {
		fmt.Fprintln(w, "topics:")
		for _, k := range sortedKeys(s.Topics) {
			fmt.Fprintf(w, "  %-28s %d\n", k, s.Topics[k])
		}
	}
	fmt.Fprintf(w, "pending confirmation: %s of entries\n", pct(s.PendingShare))
	fmt.Fprintf(w, "stale (not updated for %d days): %d, %s of live entries\n", s.StaleDays, s.Stale, pct(s.StaleShare))
	fmt.Fprintf(w, "conflicting (pending or with see links): %d", len(s.Conflicting))
	if len(s.Conflicting) > 0 {
		fmt.Fprintf(w, ": %s", joinMax(s.Conflicting, 20))
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "superseded: %d\n", s.Superseded)
	if !s.Log.Enabled && s.Log.Injects == 0 {
		fmt.Fprintln(w, "usage: no inject log (set inject.log = true or MEMCTL_INJECT_LOG=1)")
		return
	}
	fmt.Fprintf(w, "usage: %d injects, %.0f tokens on average (max %d); %d used reports; hit rate %s (%d used / %d injected ids)\n",
		s.Log.Injects, s.Log.AvgTokens, s.Log.MaxTokens, s.Log.UsedReports, pct(s.Log.HitRate), s.Log.UsedIDs, s.Log.InjectedIDs)
	if s.Log.BadLines > 0 {
		fmt.Fprintf(w, "usage: %d unreadable log lines skipped\n", s.Log.BadLines)
	}
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func joinMax(ids []string, n int) string {
	out := ""
	for i, id := range ids {
		if i == n {
			return out + fmt.Sprintf(" (+%d more)", len(ids)-n)
		}
		if i > 0 {
			out += ", "
		}
		out += id
	}
	return out
}
