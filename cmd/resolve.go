package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

type resolveOptions struct {
	Machine string
	JSON    bool
}

func init() { register(newResolveCmd) }

func newResolveCmd(f *Factory) *cobra.Command {
	opts := &resolveOptions{}
	cmd := &cobra.Command{
		Use:   "resolve",
		Short: "Finish a git merge of the memory that stopped on conflicts",
		Long: `Resolve finishes your own git pull or git merge of the memory when git
stopped on conflicts (conflict markers in MEMORY.md or topic files). It
merges the two commits entry by entry with the same rules as memctl sync
(docs/SYNC.md), from the commits themselves, never from the files with
markers, and commits the merge. The files as they were are saved under
.memctl/cache/rescued/ first.

Files that are not memory files and that both sides changed are yours to
resolve: edit them (remove the markers), then run memctl resolve.
memctl sync runs resolve itself when it finds a merge in progress.`,
		Example: `  git pull          # stops: CONFLICT (content): Merge conflict in MEMORY.md
  memctl resolve
  memctl resolve --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runResolve(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Machine, "machine", "", "this machine's name in the merge commit (default: the host name)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print what was done as JSON")
	return cmd
}

func runResolve(ctx context.Context, f *Factory, opts *resolveOptions) error {
	s, err := f.Store(ctx, "git")
	if err != nil {
		return err
	}
	res, err := s.Resolve(ctx, opts.Machine)
	if err != nil {
		return err
	}
	if opts.JSON {
		if err := f.printJSON(res); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(f.IO.Out, "merged %.12s entry by entry: %.12s\n", res.Merged, res.Commit)
		for _, p := range res.Saved {
			fmt.Fprintf(f.IO.ErrOut, "memctl: your working copy was saved as %s\n", p)
		}
		for _, c := range res.Merge.Conflicts {
			fmt.Fprintf(f.IO.ErrOut, "memctl: %s was edited differently on both sides: the newer edit stays; the other waits in Pending as %s\n", c.ID, c.Pending)
		}
	}
	if len(res.Merge.Conflicts) > 0 {
		return &ExitError{Code: ExitConflicts}
	}
	return nil
}
