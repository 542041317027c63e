package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newUsedCmd) }

type usedOptions struct {
	IDs  []string
	JSON bool
}

func newUsedCmd(f *Factory) *cobra.Command {
	opts := &usedOptions{}
	cmd := &cobra.Command{
		Use:   "used ID...",
		Short: "Record which injected entries the agent used",
		Long: `Record the ids of injected entries an agent actually used, for the hit rate
of ` + "`memctl stats`" + ` (used ids / injected ids). The ids of existing entries
are recorded; an unknown id (agents mistype them) is reported on stderr with
the closest ids, and recorded nowhere; the exit status is 1 only when no
given id exists. The record is one JSON line appended (O_APPEND, one write) to the
git-ignored .memctl/cache/inject.log, so concurrent agents never interleave.
It is written whether or not inject logging is on; turn that on with
inject.log = true or MEMCTL_INJECT_LOG=1 so the injects are counted too.
It says on stderr which ids it recorded; with --json it prints
{"recorded_ids": […], "unknown_ids": […]} instead.`,
		Example: `  memctl used dec-014 inc-004
  memctl inject --task "$TASK" --format json | jq -r '.entries[].id' | head -2 | xargs memctl used`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IDs = args
			return runUsed(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the recorded and unknown ids as JSON")
	return cmd
}

func runUsed(ctx context.Context, f *Factory, opts *usedOptions) error {
	s, c, err := loadCorpus(ctx, f)
	if err != nil {
		return err
	}
	clean, unknown := splitKnown(c, opts.IDs)
	if len(unknown) > 0 {
		all := make([]string, 0, c.Len())
		for i := 0; i < c.Len(); i++ {
			all = append(all, c.Ref(i))
		}
		for _, id := range unknown {
			msg := "no entry with id " + id + "; not recorded"
			if dym := mdmem.DidYouMean(mdmem.SuggestIDs(id, all)); dym != "" {
				msg += " (" + dym + ")"
			}
			fmt.Fprintf(f.IO.ErrOut, "memctl: warning: %s\n", msg)
		}
	}
	if len(clean) > 0 {
		if err := mdmem.AppendUsageLog(s.Dir, mdmem.UsageRecord{Kind: mdmem.UsageUsed, Time: f.Now().UTC(), IDs: clean}); err != nil {
			return err
		}
	}
	if opts.JSON {
		if err := f.printJSON(struct {
			Recorded []string `json:"recorded_ids"`
			Unknown  []string `json:"unknown_ids"`
		}{clean, unknown}); err != nil {
			return err
		}
	}
	if len(clean) == 0 {
		return &ExitError{Code: ExitFailure, Msg: "no known id given; nothing recorded"}
	}
	if !opts.JSON {
		fmt.Fprintf(f.IO.ErrOut, "memctl: recorded %s as used\n", strings.Join(clean, ", "))
	}
	return nil
}
