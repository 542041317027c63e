package cmd

import (
	"context"
	"encoding/json"
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
like instructions, that contradict an entry (both named), or that restate an
archived entry. Keep one with memctl confirm <id>, drop it to the archive
with memctl reject <id>.

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
	items := consolidate.Pending(m)
	if opts.JSON {
		if items == nil {
			items = []consolidate.PendingItem{}
		}
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		return enc.Encode(items)
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
	}
	limit := s.Config.Consolidate.MaxPending
	fmt.Fprintf(f.IO.ErrOut, "memctl: %d awaiting confirmation, at most %d (consolidate.max_pending)\n", len(items), limit)
	if len(items) >= limit {
		fmt.Fprintln(f.IO.ErrOut, "memctl: pending confirmation is full: further candidates for it stay queued until you confirm or reject some")
	}
	return nil
}
