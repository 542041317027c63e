package cmd

import (
	"context"
	"fmt"
	"time"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newLogCmd) }

type logOptions struct {
	ID    string
	Limit int
	JSON  bool
}

func newLogCmd(f *Factory) *cobra.Command {
	opts := &logOptions{}
	cmd := &cobra.Command{
		Use:   "log [id]",
		Short: "Show the git history of one entry, or of the memory",
		Long: `Log lists the commits that touched an entry, newest first, found by the
Memctl-Entry trailers memctl writes (hand edits committed by memctl carry
them too). Without an id it lists memctl's history of the memory.`,
		Example: `  memctl log pref-001
  memctl log dec-014 --json
  memctl log -n 20`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				opts.ID = args[0]
			}
			if opts.Limit < 0 {
				return FlagErrorf("-n must not be negative")
			}
			return runLog(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().IntVarP(&opts.Limit, "limit", "n", 0, "show at most this many commits (0 = all)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

type logCommit struct {
	Hash     string              `json:"hash"`
	Author   string              `json:"author"`
	Email    string              `json:"email"`
	Date     time.Time           `json:"date"`
	Subject  string              `json:"subject"`
	Trailers map[string][]string `json:"trailers,omitempty"`
}

func runLog(ctx context.Context, f *Factory, opts *logOptions) error {
	s, err := f.Store(ctx)
	if err != nil {
		return err
	}
	commits, err := s.History(ctx, opts.ID, opts.Limit)
	if err != nil {
		return err
	}
	out := make([]logCommit, 0, len(commits))
	for _, c := range commits {
		out = append(out, logCommit{Hash: c.Hash, Author: c.Author.Name, Email: c.Author.Email, Date: c.When, Subject: c.Subject, Trailers: c.Trailers})
	}
	if opts.JSON {
		return writeJSON(f.IO.Out, out)
	}
	for _, c := range out {
		fmt.Fprintf(f.IO.Out, "%s %s %-20s %s\n", short(c.Hash), c.Date.UTC().Format("2006-01-02 15:04"), c.Author, c.Subject)
	}
	if len(out) == 0 && opts.ID != "" {
		fmt.Fprintf(f.IO.ErrOut, "memctl: no commit names %s\n", opts.ID)
		if !mdmem.IsValidID(opts.ID) {
			return FlagErrorf("%q is not an entry id (ids look like pref-001)", opts.ID)
		}
	}
	return nil
}
