package cmd

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newLogCmd) }

type logOptions struct {
	ID    string
	Limit int
	Patch bool
	JSON  bool
}

func newLogCmd(f *Factory) *cobra.Command {
	opts := &logOptions{}
	cmd := &cobra.Command{
		Use:   "log [id]",
		Short: "Show every version of one entry, or the memory's history",
		Long: `With an id, log lists each version of the entry, newest first: the commit,
its date and author, what the commit did to the entry (added, changed,
moved, archived, metadata, removed) and the entry's line after it. It reads
the commits that name the id (memctl's Memctl-Entry trailers, hand edits
included) and the commits a person made with git directly. -p also prints
the line before the commit.

Without an id it lists the memory's commits, newest first.

Exit status: 1 when the id has no history (with or without --json).`,
		Example: `  memctl log pref-001
  memctl log pref-001 -p
  memctl log dec-003 --json | jq -r '.[].content'
  memctl log -n 20`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.ID = args[0]
				if !mdmem.IsValidID(opts.ID) {
					return FlagErrorf("%q is not an entry id (ids look like pref-001)", opts.ID)
				}
			}
			if opts.Limit < 0 {
				return FlagErrorf("-n must not be negative")
			}
			if opts.Patch && opts.ID == "" {
				return FlagErrorf("-p needs an entry id")
			}
			if opts.ID == "" {
				return runMemoryLog(cmd.Context(), f, opts)
			}
			return runEntryLog(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().IntVarP(&opts.Limit, "limit", "n", 0, "show at most this many commits (0 = all)")
	cmd.Flags().BoolVarP(&opts.Patch, "patch", "p", false, "with an id: also print the entry's line before each commit")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

type logCommit struct {
	Hash     string              `json:"commit"`
	Author   string              `json:"author"`
	Email    string              `json:"email"`
	Date     time.Time           `json:"committed_at"`
	Subject  string              `json:"subject"`
	Trailers map[string][]string `json:"trailers"`
}

// runMemoryLog lists the memory's commits.
func runMemoryLog(ctx context.Context, f *Factory, opts *logOptions) error {
	s, err := f.Store(ctx)
	if err != nil {
		return err
	}
	commits, err := s.History(ctx, "", opts.Limit)
	if err != nil {
		return err
	}
	out := make([]logCommit, 0, len(commits))
	for _, c := range commits {
		out = append(out, logCommit{Hash: c.Hash, Author: c.Author.Name, Email: c.Author.Email, Date: c.When.UTC(), Subject: c.Subject, Trailers: c.Trailers})
	}
	if opts.JSON {
		return f.printJSON(out)
	}
	for _, c := range out {
		fmt.Fprintf(f.IO.Out, "%s %s %-20s %s\n", short(c.Hash), c.Date.UTC().Format("2006-01-02 15:04"), c.Author, c.Subject)
	}
	return nil
}

// entryVersion is one version of an entry in `log <id> --json`.
type entryVersion struct {
	Commit    string    `json:"commit"`
	Date      time.Time `json:"committed_at"`
	Author    string    `json:"author"`
	Email     string    `json:"email"`
	Subject   string    `json:"subject"`
	Operation string    `json:"operation,omitempty"`
	Change    string    `json:"change"`
	File      string    `json:"file,omitempty"`
	Section   string    `json:"section,omitempty"`
	Content   string    `json:"content,omitempty"`
	Line      string    `json:"line,omitempty"`
	OldFile   string    `json:"old_file,omitempty"`
	OldLine   string    `json:"old_line,omitempty"`
}

// runEntryLog lists the versions of one entry.
func runEntryLog(ctx context.Context, f *Factory, opts *logOptions) error {
	s, err := f.Store(ctx)
	if err != nil {
		return err
	}
	versions, err := s.EntryHistory(ctx, opts.ID, opts.Limit)
	if err != nil {
		return err
	}
	out := make([]entryVersion, 0, len(versions))
	for _, v := range versions {
		out = append(out, entryVersion{
			Commit: v.Commit, Date: v.When.UTC(), Author: v.Author.Name, Email: v.Author.Email, Subject: v.Subject,
			Operation: v.Op, Change: v.Change, File: v.File, Section: v.Section, Content: v.Content, Line: v.Line,
			OldFile: v.OldFile, OldLine: v.OldLine,
		})
	}
	if opts.JSON {
		if err := f.printJSON(out); err != nil {
			return err
		}
	} else {
		printEntryLog(f.IO.Out, out, opts.Patch)
	}
	if len(out) == 0 {
		msg := fmt.Sprintf("no commit names or changes %s", opts.ID)
		if mem, err := s.Load(ctx); err == nil {
			if dym := mdmem.DidYouMean(mem.SuggestIDs(opts.ID)); dym != "" {
				msg += "; " + dym
			} else {
				msg += " (see `memctl list` for the ids there are)"
			}
		}
		return &ExitError{Code: ExitFailure, Msg: msg}
	}
	return nil
}

func printEntryLog(w io.Writer, out []entryVersion, patch bool) {
	for _, v := range out {
		who := v.Author
		if v.Operation != "" {
			who += " (" + v.Operation + ")"
		}
		fmt.Fprintf(w, "%s %s %-9s %s: %s\n", short(v.Commit), v.Date.Format("2006-01-02 15:04"), v.Change, who, v.Subject)
		where := v.File
		if v.Section != "" {
			where += " › " + v.Section
		}
		if patch && v.OldLine != "" && v.OldLine != v.Line {
			fmt.Fprintf(w, "    --- %s\n    -%s\n", v.OldFile, v.OldLine)
			if v.Line != "" {
				fmt.Fprintf(w, "    +++ %s\n    +%s\n", where, v.Line)
			}
			continue
		}
		switch {
		case v.Line != "":
			fmt.Fprintf(w, "    %s  [%s]\n", v.Line, where)
		case v.OldLine != "":
			fmt.Fprintf(w, "    (removed; was in %s)\n", v.OldFile)
		}
	}
}
