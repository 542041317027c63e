package cmd

import (
	"context"
	"fmt"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

type recoverOptions struct {
	KeepEdits    bool
	DiscardEdits bool
	JSON         bool
}

func init() { register(newRecoverCmd) }

func newRecoverCmd(f *Factory) *cobra.Command {
	opts := &recoverOptions{}
	cmd := &cobra.Command{
		Use:   "recover",
		Short: "Finish a write that was interrupted, and say what happened to it",
		Long: `Recover finishes a write an earlier memctl was killed in the middle of,
as every writing command does first, and prints what it did. A write whose
commit never reached the branch did not happen (run it again); one whose
commit did is brought up to date in the files.

When a person edited one of its files since, in a way that does not merge
with memctl's change (the same entry changed on both sides), every writing
command refuses and leaves everything as it is. Settle it with one of:

  --keep-edits      your version of those files stays as you wrote it, and
                    is committed as your hand edit on top of memctl's commit
  --discard-edits   memctl's committed version replaces yours, which is
                    saved under .memctl/cache/rescued/ first`,
		Example: `  memctl recover
  memctl recover --keep-edits
  memctl recover --discard-edits --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.KeepEdits && opts.DiscardEdits {
				return FlagErrorf("give --keep-edits or --discard-edits, not both")
			}
			return runRecover(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.KeepEdits, "keep-edits", false, "keep your edits of files an interrupted write could not update")
	fl.BoolVar(&opts.DiscardEdits, "discard-edits", false, "put memctl's committed version in place of your edits (yours are saved)")
	fl.BoolVar(&opts.JSON, "json", false, "print what was done as JSON")
	return cmd
}

func runRecover(ctx context.Context, f *Factory, opts *recoverOptions) error {
	s, err := f.Store(ctx, "git")
	if err != nil {
		return err
	}
	choice := mdmem.RecoverStatus
	switch {
	case opts.KeepEdits:
		choice = mdmem.KeepEdits
	case opts.DiscardEdits:
		choice = mdmem.DiscardEdits
	}
	notes, err := mdmem.Recover(ctx, s, choice)
	if err != nil {
		return err
	}
	// Lock's notes are printed by Run as "recovered: …"; say the rest.
	s.Recovered = nil
	if opts.JSON {
		return f.printJSON(struct {
			Done []string `json:"done"`
		}{notes})
	}
	for _, n := range notes {
		fmt.Fprintln(f.IO.Out, n)
	}
	return nil
}
