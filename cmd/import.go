package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newImportCmd) }

type importOptions struct {
	File            string
	SkipInvalid     bool
	JSON            bool
	Quiet           bool
	AllowDelete     bool
	Allow           bool
	AllowDuplicates bool
}

func newImportCmd(f *Factory) *cobra.Command {
	opts := &importOptions{}
	cmd := &cobra.Command{
		Use:   "import [file.jsonl]",
		Short: "Bulk-load entries straight into the memory (no queue, no LLM)",
		Long: `Import reads JSON Lines in the schema of add --json (from the file, or
stdin) and writes the entries straight into the memory in one commit: ids
are allocated per category, core categories go to their section of the core
profile, entries with a topic and other categories go to
topics/<topic or category>.md, and the topic index is kept up to date. A
topic file that would grow past files.max_bytes (8 MiB) continues in
topics/<topic>-2.md, -3, …; an import that would grow MEMORY.md past it
is refused.

Import is all or nothing: if any line is invalid (see add --help and
docs/FORMAT.md for the input rules), every bad line is reported and nothing
is imported, unless --skip-invalid is given. The input is validated first,
then streamed into the memory under the lock, on every core; neither the
input nor the topic files it creates are held in memory whole (they pass
through unlinked temp files in .memctl/cache, and each new file is read
back once, when its commit is written).

The source of a line without one is "agent". A person's label
("user_explicit") counts as the person's only when import runs at a
terminal with the file as its argument; read from stdin, a script or an
agent's shell, the line counts as an agent's. Secrets are redacted (or
the line refused) as by add; entries that read like instructions to a
model, and agents' preferences and constraints (consolidate.hold_agent_core),
go to Pending confirmation instead of their section, for memctl confirm.

A line whose text (case, width and white space aside) an entry of the same
category already holds is skipped and reported, so running the same import
twice adds nothing the second time; --allow-duplicates imports such lines
anyway. A killed import did not happen unless its commit reached the
branch (the next memctl command says which); run it again either way.

Uncommitted hand edits of memory files are committed first, as their own
commit; entries deleted by hand are restored into the archive unless
--allow-delete (see consolidate).`,
		Example: `  memctl import notes.jsonl
  memctl import --skip-invalid < export.jsonl
  memctl import notes.jsonl --json
  memctl import notes.jsonl --allow-duplicates`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.File = args[0]
			}
			return runImport(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.SkipInvalid, "skip-invalid", false, "import the valid lines even if some are invalid")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	cmd.Flags().BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing on stdout (warnings still go to stderr)")
	cmd.Flags().BoolVar(&opts.AllowDelete, "allow-delete", false, allowDeleteUsage)
	cmd.Flags().BoolVar(&opts.Allow, "allow-forgotten", false, "import entries even if they repeat an entry memctl forget deleted")
	cmd.Flags().BoolVar(&opts.AllowDuplicates, "allow-duplicates", false, "import lines even if an entry of their category already holds their text")
	return cmd
}

func runImport(ctx context.Context, f *Factory, opts *importOptions) error {
	s, err := f.Store(ctx, "add", "git", "consolidate", "files") // hold_agent_core, files.max_bytes
	if err != nil {
		return err
	}
	if opts.File != "" && opts.File != "-" {
		fh, err := os.Open(opts.File)
		if err != nil {
			return err
		}
		defer fh.Close()
		streams := *f.IO
		streams.In = fh
		f = &Factory{IO: &streams, DirArg: f.DirArg, Getenv: f.Getenv, Now: f.Now}
	}
	// Pass 1, before the lock: validate every line and spool the valid
	// candidates, normalised, to a temp file that is already unlinked (a
	// killed import leaves nothing). Pass 2, under the lock: stream them
	// from there into the memory. Neither pass holds all candidates.
	spool, err := newSpool(s.Dir)
	if err != nil {
		return err
	}
	defer spool.Close()
	w := mdmem.NewSpoolWriter(spool)
	check, err := forgottenCheck(s, opts.Allow)
	if err != nil {
		return err
	}
	// A person who ran import at a terminal with a file vouches for its
	// person labels; from stdin, a script or an agent's shell, they count
	// as an agent's.
	atTerminal := f.IO.InTTY && opts.File != "" && opts.File != "-"
	unseen, lines := 0, 0
	bad, err := eachCandidate(ctx, f, s.Config.Add.MaxContentBytes, s.Config.Add.Redactor(), check, func(c *mdmem.Candidate) error {
		unseen += witness(c, atTerminal)
		lines++
		return w.Write(c)
	})
	if err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if bad > 0 && !opts.SkipInvalid {
		return &HintError{Err: fmt.Errorf("%d invalid %s; nothing imported", bad, pluralize(bad, "line", "lines")),
			Hint: "fix the lines above, or pass --skip-invalid to import the rest"}
	}
	if opts.AllowDelete {
		s.Config.Git.AllowHandDelete = true
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return err
	}
	res, err := s.ImportStream(ctx, mdmem.ImportOptions{AllowDuplicates: opts.AllowDuplicates, Lines: lines}, mdmem.NewSpoolReader(spool).Read)
	if err != nil {
		return err
	}
	printHandEdits(f, res.HandEdit)
	noteUnseen(f, unseen)
	if n := len(res.Skipped); n > 0 {
		var ids []string
		for _, sk := range res.Skipped {
			ids = append(ids, sk.Entry)
		}
		if len(ids) > 8 {
			ids = append(ids[:8], "…")
		}
		fmt.Fprintf(f.IO.ErrOut, "memctl: note: skipped %d %s already in the memory (%s); --allow-duplicates imports them anyway\n",
			n, pluralize(n, "line", "lines"), strings.Join(ids, ", "))
	}
	if n := len(res.Folded); n > 0 {
		into := map[string]bool{}
		var ids []string
		for _, fo := range res.Folded {
			if !into[fo.Into] {
				into[fo.Into] = true
				ids = append(ids, fo.Into)
			}
		}
		fmt.Fprintf(f.IO.ErrOut, "memctl: note: %d %s read like instructions to the model and repeat %s, waiting in Pending confirmation: folded into it, no entry of their own\n",
			n, pluralize(n, "line", "lines"), strings.Join(ids, ", "))
	}
	if opts.JSON {
		return f.printJSON(struct {
			*mdmem.ImportResult
			Invalid int `json:"invalid"`
		}{res, bad})
	}
	if !opts.Quiet {
		fmt.Fprintf(f.IO.Out, "imported %d %s", len(res.IDs), pluralize(len(res.IDs), "entry", "entries"))
		if res.Commit != "" {
			fmt.Fprintf(f.IO.Out, " (commit %s)", short(res.Commit))
		}
		fmt.Fprintln(f.IO.Out)
	}
	if bad > 0 {
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: skipped %d invalid %s (--skip-invalid)\n", bad, pluralize(bad, "line", "lines"))
	}
	return nil
}

// newSpool creates the temp file an import passes its valid candidates
// through (mdmem.ScratchFile: in the memory's cache, already unlinked).
func newSpool(dir string) (*os.File, error) {
	fh, err := mdmem.ScratchFile(dir, ".import-spool.tmp-*")
	if err != nil {
		return nil, fmt.Errorf("import spool: %w", err)
	}
	return fh, nil
}
