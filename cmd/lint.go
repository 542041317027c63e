package cmd

import (
	"context"
	"fmt"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newLintCmd) }

type lintOptions struct{ JSON bool }

func newLintCmd(f *Factory) *cobra.Command {
	opts := &lintOptions{}
	cmd := &cobra.Command{
		Use:   "lint",
		Short: "Report format problems in the memory files",
		Long: `Lint checks MEMORY.md and the topic files against the format
(docs/FORMAT.md), and .memctl/config.toml (every section: other commands
stop only for the sections they use), and prints each problem as
file:line: message. It also reports what a hand edit may have brought in:
secrets anywhere in a memory file (by kind and line, never quoted), and
entries of the core profile or a topic that read like instructions to the
model (entries a person confirmed aside; docs/GOVERNANCE.md). It changes
nothing. Exit status 1 when there is any problem, 0 when there is none.
An entry that repeats the text of one memctl forget deleted (a hand edit
or an old copy brought it back) is a warning on stderr: delete it, or
keep it if that was meant (add --allow-forgotten brings texts back too).`,
		Example: `  memctl lint
  memctl lint --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runLint(cmd.Context(), f, opts) },
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

// lintHeapLimit bounds lint's heap: it reads file by file but keeps every
// id (1M entries: ~100 MB live at the end), and the collector's default
// slack would double that.
const lintHeapLimit = 128 << 20

func runLint(ctx context.Context, f *Factory, opts *lintOptions) error {
	defer heapLimit(lintHeapLimit, false)()
	s, err := f.Store(ctx)
	if err != nil {
		return err
	}
	ts, tsErr := s.LoadTombstones()
	// File by file: of the files read, the linter keeps what its checks
	// across files need, not the entries.
	l := mdmem.NewLinter(s.Dir)
	var forgotten []string
	coreFit := ""
	err = mdmem.Walk(ctx, s.Dir, func(d *mdmem.Doc) error {
		f.warnConflicts(d.Conflicts)
		l.Check(d)
		if tsErr == nil {
			forgotten = append(forgotten, forgottenWarnings(ts, d.Entries)...)
		}
		if d.Path == mdmem.MainFile {
			coreFit = coreFitWarning(f, s, d.Entries)
		}
		return nil
	})
	if err != nil {
		return err
	}
	ps := l.Problems()
	for _, p := range s.Config.Problems() {
		ps = append(ps, mdmem.Problem{File: mdmem.ConfigPath, Line: p.Line, Message: p.Err.Error()})
	}
	if opts.JSON {
		if ps == nil {
			ps = []mdmem.Problem{}
		}
		if err := f.printJSON(ps); err != nil {
			return err
		}
	} else {
		for _, p := range ps {
			fmt.Fprintln(f.IO.Out, p.String())
		}
	}
	if tsErr != nil {
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: tombstones not checked: %v\n", tsErr)
	}
	for _, w := range forgotten {
		fmt.Fprint(f.IO.ErrOut, w)
	}
	if s.Config.Inject.CoreShare != 0 {
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: %s: inject.core_share no longer has an effect (inject.l2_reserve replaced it: the core takes what L2 does not keep); delete the line\n", mdmem.ConfigPath)
	}
	if coreFit != "" {
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: %s\n", coreFit)
	}
	if len(ps) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "memctl: %d %s\n", len(ps), pluralize(len(ps), "problem", "problems"))
		return &ExitError{Code: ExitFailure}
	}
	return nil
}

// forgottenWarnings are the warnings about entries that repeat a
// forgotten entry's text (the tombstones hold keyed hashes, never the
// text). Only this copy's key's tombstones: a public hash per entry would
// take minutes.
func forgottenWarnings(ts *mdmem.Tombstones, entries []*mdmem.Entry) []string {
	var out []string
	for _, e := range entries {
		if t, ok := ts.MatchKeyed(e.Content); ok {
			out = append(out, fmt.Sprintf("memctl: warning: %s:%d: %s repeats the text of %s, forgotten on %s; delete it unless it was brought back on purpose\n",
				e.File, e.Line, e.ID, t.ID, t.Date))
		}
	}
	return out
}
