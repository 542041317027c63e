package cmd

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"time"

	"github.com/memctl/memctl/consolidate"
	"github.com/memctl/memctl/inject"
	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newStatsCmd) }

type statsOptions struct {
	injectFlags
	JSON bool
}

func newStatsCmd(f *Factory) *cobra.Command {
	opts := &statsOptions{}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Show memory size against budgets, quality and usage",
		Long: `Show how the memory measures up (the seed's evaluation section):

  size     core lines, bytes and tokens against inject's limits and core
           share; entries per section and topic
  quality  pending-confirmation share; stale share (not updated for
           --stale-days); conflicting entries (pending, or with see links)
  usage    from the opt-in inject log (.memctl/cache/inject.log, enabled by
           inject.log = true or MEMCTL_INJECT_LOG=1): injects, tokens per
           inject, and the hit rate (ids reported by ` + "`memctl used`" + ` / ids injected)
  expiring what retention acts on within 30 days: entries past their
           expires date (consolidate archives them) and archived entries
           past consolidate.archive_days (consolidate forgets them)
  held     candidates waiting in .memctl/queue/held/ for a person (a
           secret, invalid, or no usable model decision after
           consolidate.max_attempts runs); memctl queue --held lists them`,
		Example: `  memctl stats
  memctl stats --json | jq .core
  memctl stats --budget 2000 --stale-days 30`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Given = givenFlags(cmd)
			return runStats(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	cmd.Flags().IntVarP(&opts.Budget, "budget", "b", 0, "budget to measure the core against (default inject.budget)")
	cmd.Flags().IntVar(&opts.StaleDays, "stale-days", -1, "entries not updated for this many days are stale (default inject.stale_days)")
	cmd.Flags().StringVar(&opts.Tokenizer, "tokenizer", "", "token counter: o200k, cl100k or chars:N (default inject.tokenizer)")
	cmd.Flags().StringVar(&opts.Now, "now", "", "date used for staleness (default: the clock)")
	return cmd
}

func runStats(ctx context.Context, f *Factory, opts *statsOptions) error {
	s, err := f.Store(ctx, "inject")
	if err != nil {
		return err
	}
	o, err := injectOptionsFrom(f, s.Config, opts.injectFlags)
	if err != nil {
		return err
	}
	if o.Header, o.RulesHeading, err = inject.LoadHeader(s.Dir, o.Now); err != nil {
		return err
	}
	now := o.Now
	if now.IsZero() {
		now = f.Now()
	}
	// File by file: the counts, MEMORY.md's notes and what retention acts
	// on are kept, not the topic files' entries.
	sc := inject.NewStatsCounter(o)
	due := mdmem.NewRetentionScan(now, expiringWindow, s.Config.Consolidate.ArchiveDays)
	err = mdmem.Walk(ctx, s.Dir, func(d *mdmem.Doc) error {
		f.warnConflicts(d.Conflicts)
		sc.Add(d)
		due.Add(d)
		return nil
	})
	if err != nil {
		return err
	}
	recs, bad, err := mdmem.ReadUsageLog(s.Dir)
	if err != nil {
		return err
	}
	st := sc.Stats(recs, bad, s.Config.Inject.Log || f.Getenv("MEMCTL_INJECT_LOG") == "1")
	soon := due.Due()
	held, err := consolidate.HeldFiles(s.Dir)
	if err != nil {
		return err
	}
	if opts.JSON {
		type sectionCount struct {
			Section string `json:"section"`
			Entries int    `json:"entries"`
		}
		sections := []sectionCount{}
		for _, name := range slices.Sorted(maps.Keys(st.Sections)) {
			sections = append(sections, sectionCount{name, st.Sections[name]})
		}
		return f.printJSON(struct {
			*inject.Stats
			Sections     []sectionCount       `json:"sections"` // MEMORY.md headings are values, not keys
			ExpiringSoon []mdmem.ExpiringSoon `json:"expiring_soon"`
			Held         []consolidate.Hold   `json:"held"`
		}{st, sections, soon, held})
	}
	st.WriteText(f.IO.Out)
	writeExpiring(f.IO.Out, soon, now)
	// Held candidates need a person; consolidate announces each once,
	// stats says so every time it is asked.
	fmt.Fprintf(f.IO.Out, "held candidates needing a person: %d", len(held))
	if len(held) > 0 {
		fmt.Fprint(f.IO.Out, " (memctl queue --held)")
	}
	fmt.Fprintln(f.IO.Out)
	return nil
}

// expiringWindow is how far ahead stats looks for retention.
const expiringWindow = 30 * 24 * time.Hour

// writeExpiring prints what retention will archive or delete within
// expiringWindow (overdue first: consolidate acts on those next run).
func writeExpiring(w io.Writer, soon []mdmem.ExpiringSoon, now time.Time) {
	fmt.Fprintf(w, "expiring within 30 days: %d\n", len(soon))
	for _, e := range soon {
		when := "on " + mdmem.FormatTime(e.When)
		if !e.When.After(now) {
			when = "due now (next consolidate)"
		}
		verb := "archived (expires)"
		if e.Action == "delete" {
			verb = "deleted (archive retention)"
		}
		fmt.Fprintf(w, "  %s (%s): %s %s\n", e.ID, e.Place, verb, when)
	}
}

// coreFitWarning says when the memory's core profile (the entries of
// MEMORY.md) no longer fits the configured inject block ("" when it does,
// or cannot be measured): lint and consolidate print it, as stats does.
func coreFitWarning(f *Factory, s *mdmem.Store, mainEntries []*mdmem.Entry) string {
	cnt := configCounter(s)
	if cnt == nil {
		return ""
	}
	c := s.Config
	o := inject.Options{Budget: c.Inject.Budget, L2Reserve: c.Inject.L2Reserve, CoreMaxTokens: c.Consolidate.CoreMaxTokens,
		Counter: cnt, Now: f.Now().UTC(), StaleDays: c.Inject.StaleDays}
	if h, _, err := inject.LoadHeader(s.Dir, o.Now); err == nil {
		o.Header = h
	}
	return inject.CoreFitWarning(inject.CoreTokens(mainEntries, cnt, o.Now, o.StaleDays), o)
}
