package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/memctl/memctl/consolidate"
	"github.com/spf13/cobra"
)

type pendingOptions struct{ JSON bool }

func init() { register(newPendingCmd) }

func newPendingCmd(f *Factory) *cobra.Command {
	opts := &pendingOptions{}
	cmd := &cobra.Command{
		Use:   "pending",
		Short: "List entries awaiting confirmation, with why",
		Long: `Pending lists the entries of "## Pending confirmation": candidates that read
like instructions, that may update or contradict an entry ("may update
<id>", "conflicts with <id>"), or that restate an archived entry. The entry
it names is printed under it ("this" and "now"), so the two texts can be
compared. Keep one with memctl confirm <id> (which supersedes the entry it
may update), drop it to the archive with memctl reject <id>.

Pending confirmation is never injected and does not count against the core
profile's limits; it holds at most consolidate.max_pending entries (default
50). When it is full, candidates that would go there stay queued (held,
"pending confirmation is full") until some are confirmed or rejected. The
count and the cap are printed on stderr.`,
		Example: `  memctl pending
  memctl pending --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runPending(cmd.Context(), f, opts) },
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print as JSON")
	return cmd
}

func runPending(ctx context.Context, f *Factory, opts *pendingOptions) error {
	s, err := f.Store(ctx)
	if err != nil {
		return err
	}
	m, err := s.Load(ctx)
	if err != nil {
		return err
	}
	f.warnConflicts(m.Conflicts())
	items := consolidate.Pending(m)
	if opts.JSON {
		return f.printJSON(items)
	}
	if len(items) == 0 {
		fmt.Fprintln(f.IO.ErrOut, "memctl: nothing awaits confirmation")
		return nil
	}
	for _, it := range items {
		fmt.Fprintf(f.IO.Out, "%s  %s\n", it.ID, it.Content)
		fmt.Fprintf(f.IO.Out, "    why: %s\n", strings.Join(it.Why, "; "))
		if len(it.See) > 0 {
			fmt.Fprintf(f.IO.Out, "    see: %s\n", strings.Join(it.See, ", "))
		}
		// The two texts one under the other, so the change shows.
		if len(it.Others) > 0 {
			w := len(it.ID)
			for _, o := range it.Others {
				w = max(w, len(o.ID))
			}
			fmt.Fprintf(f.IO.Out, "    this  %-*s  %-10s  %s\n", w, it.ID, it.Created, it.Content)
			for _, o := range it.Others {
				where := string(o.Place)
				if o.SupersededBy != "" {
					where += ", superseded by " + o.SupersededBy
				}
				fmt.Fprintf(f.IO.Out, "    %-4s  %-*s  %-10s  %s  (%s)\n", "now", w, o.ID, o.Date, o.Content, where)
			}
		}
	}
	limit := s.Config.Consolidate.MaxPending
	fmt.Fprintf(f.IO.ErrOut, "memctl: %d awaiting confirmation, at most %d (consolidate.max_pending)\n", len(items), limit)
	if len(items) >= limit {
		fmt.Fprintln(f.IO.ErrOut, "memctl: pending confirmation is full: further candidates for it stay queued until you confirm or reject some")
	}
	return nil
}
