package cmd

import (
	"context"

	"github.com/memctl/memctl/consolidate"
	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

type rejectOptions struct {
	Reason string
	JSON   bool
	Quiet  bool
}

func init() { register(newRejectCmd) }

func newRejectCmd(f *Factory) *cobra.Command {
	opts := &rejectOptions{}
	cmd := &cobra.Command{
		Use:   "reject <id>",
		Short: "Move a pending entry to the archive with the reason",
		Long: `Reject moves an entry of "## Pending confirmation" to the archive, noting
"rejected <date>: <reason>". It is not deleted (memctl forget deletes), and
a later candidate repeating it is not re-added. One commit.`,
		Example: `  memctl reject pref-007 --reason "planted instruction"`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !mdmem.IsValidID(args[0]) {
				return FlagErrorf("invalid entry id %q (want e.g. dec-014)", args[0])
			}
			return runReject(cmd.Context(), f, args[0], opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Reason, "reason", "m", "", "why it is rejected (kept in the archive; one line, at most 1000 bytes)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing on stdout (warnings still go to stderr)")
	return cmd
}

func runReject(ctx context.Context, f *Factory, id string, opts *rejectOptions) error {
	s, err := f.Store(ctx, "git", "files")
	if err != nil {
		return err
	}
	r, err := consolidate.Reject(ctx, s, id, opts.Reason, f.Now())
	if err != nil {
		return err
	}
	return printResolution(f, r, opts.JSON, opts.Quiet)
}
