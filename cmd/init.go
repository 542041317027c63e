package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newInitCmd) }

type initOptions struct {
	Dir   string
	JSON  bool
	Quiet bool
}

func newInitCmd(f *Factory) *cobra.Command {
	opts := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init [dir]",
		Short: "Create a memory directory, or adopt an existing directory or git repository",
		Long: `Init creates the memory directory (default: the resolved memory directory,
see memctl --help) with MEMORY.md, topics/, .memctl/config.toml and a
.gitignore for the queue and cache, makes it a git repository if it is not
inside one, and commits. Existing files are kept as they are; running init
twice changes nothing.`,
		Example: `  memctl init ~/agent-memory
  memctl init                      # the directory from --dir / $MEMCTL_DIR / XDG data home
  memctl init . --json`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.Dir = args[0]
			}
			return runInit(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing on stdout (warnings still go to stderr)")
	return cmd
}

func runInit(ctx context.Context, f *Factory, opts *initOptions) error {
	dir := opts.Dir
	if dir == "" {
		var err error
		if dir, err = f.MemoryDir(); err != nil {
			return err
		}
	}
	_, res, err := mdmem.Init(ctx, dir)
	if err != nil {
		return err
	}
	if opts.JSON {
		return f.printJSON(res)
	}
	switch {
	case opts.Quiet:
	case res.Commit == "":
		fmt.Fprintf(f.IO.Out, "memory at %s is already initialised; nothing changed\n", res.Dir)
	default:
		fmt.Fprintf(f.IO.Out, "initialised memory at %s (commit %s)\n", res.Dir, short(res.Commit))
	}
	if len(res.Uncommitted) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "memctl: note: %s were there already and are not committed by init; the next memctl write commits them as your hand edit (or commit them yourself)\n",
			strings.Join(res.Uncommitted, ", "))
	}
	return nil
}

func short(hash string) string {
	if len(hash) > 12 {
		return hash[:12]
	}
	return hash
}
