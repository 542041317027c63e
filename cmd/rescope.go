package cmd

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

type rescopeOptions struct {
	DryRun bool
	JSON   bool
	Quiet  bool
}

func init() { register(newRescopeCmd) }

func newRescopeCmd(f *Factory) *cobra.Command {
	opts := &rescopeOptions{}
	cmd := &cobra.Command{
		Use:   "rescope [from [to]]",
		Short: "Move entries from one scope to another (old project:<name> scopes to the project's path)",
		Long: `Rescope gives every entry whose scopes hold FROM (core, topics, Pending and
archive; case aside) the scope TO instead, in one commit. An entry that
already holds TO keeps one copy. Queued candidates keep their scope.

Its first use is the migration of old project scopes. A project's scope
used to be the base name of its directory (project:app); it is now the
project's full path, the home directory as ~ (project:~/work/app), so that
~/work/app and ~/personal/app are two projects. The hooks and the MCP
server no longer show entries of the old scope in that project, and memctl
lint reports them. Run in the project's directory, memctl rescope with no
argument moves its old scope to its path (FROM is the old form of the
current git project, TO project:.); TO defaults to project:. (the current
git project) when only FROM is given. Two projects that shared a base name
shared the old scope: run it in the one the entries belong to, or give
FROM and TO.`,
		Example: `  cd ~/work/app && memctl rescope --dry-run     # which entries project:app → project:~/work/app would move
  cd ~/work/app && memctl rescope
  memctl rescope project:app project:~/work/app
  memctl rescope project:billing project:~/src/billing-service --json`,
		Args: cobra.MaximumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRescope(cmd.Context(), f, args, opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.DryRun, "dry-run", "n", false, "list the entries that would move, change nothing")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing on stdout (warnings still go to stderr)")
	return cmd
}

// rescopeArgs resolves rescope's FROM and TO: the old and the current
// scope of the git project of the working directory when not given.
func rescopeArgs(f *Factory, args []string) (from, to string, err error) {
	if len(args) < 2 {
		wd, err := os.Getwd()
		if err != nil {
			return "", "", err
		}
		root, ok := mdmem.GitRoot(wd)
		if !ok {
			return "", "", &HintError{Err: fmt.Errorf("%s is not in a git project, so there is no project scope to move to", wd),
				Hint: "run memctl rescope in the project's directory, or give both scopes: memctl rescope project:app project:~/work/app"}
		}
		to = projectScope(f, root)
		from = mdmem.OldProjectScope(root)
		if to == "" || from == "" {
			return "", "", fmt.Errorf("cannot derive the scopes of the project at %s; give both: memctl rescope FROM TO", root)
		}
	}
	if len(args) >= 1 {
		from = args[0]
	}
	if len(args) == 2 {
		to = args[1]
		if to == mdmem.ProjectHere {
			wd, err := os.Getwd()
			if err != nil {
				return "", "", err
			}
			if to = projectScope(f, wd); to == "" {
				return "", "", FlagErrorf("%s stands for the git project of the current directory, and %s is not in one", mdmem.ProjectHere, wd)
			}
		}
	}
	for _, sc := range []string{from, to} {
		if err := mdmem.ValidScope(sc); err != nil {
			return "", "", &FlagError{Err: err}
		}
	}
	return from, to, nil
}

func runRescope(ctx context.Context, f *Factory, args []string, opts *rescopeOptions) error {
	from, to, err := rescopeArgs(f, args)
	if err != nil {
		return err
	}
	s, err := f.Store(ctx, "git", "files")
	if err != nil {
		return err
	}
	r, err := s.Rescope(ctx, from, to, opts.DryRun)
	if err != nil {
		return err
	}
	printHandEdits(f, r.HandEdit)
	if opts.JSON {
		return f.printJSON(r)
	}
	if opts.Quiet {
		return nil
	}
	switch {
	case len(r.IDs) == 0:
		fmt.Fprintf(f.IO.Out, "no entry has scope %s\n", from)
	case opts.DryRun:
		fmt.Fprintf(f.IO.Out, "would move %d %s from %s to %s: %s (dry run, nothing written)\n",
			len(r.IDs), pluralize(len(r.IDs), "entry", "entries"), from, to, strings.Join(r.IDs, ", "))
	default:
		fmt.Fprintf(f.IO.Out, "moved %d %s from %s to %s: %s (commit %.12s)\n",
			len(r.IDs), pluralize(len(r.IDs), "entry", "entries"), from, to, strings.Join(r.IDs, ", "), r.Commit)
	}
	return nil
}
