package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/memctl/memctl/inject"
	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newSearchCmd) }

type searchOptions struct {
	Limit  int
	Scope  string
	JSON   bool
	Traces bool

	ScopeSet bool // --scope was given (an empty one is an error)
}

func newSearchCmd(f *Factory) *cobra.Command {
	opts := &searchOptions{}
	cmd := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Search every entry, archive included",
		Long: `Search the whole memory (L3): core profile, pending confirmation, topic
files and the archive, which inject never shows. Results are ranked like
inject's L2 (BM25F with stemming); an entry whose id appears in the query
comes first. Each result shows its id, where it lives, its date and a
snippet; use ` + "`memctl show <id>`" + ` for the whole entry.

search never writes to the memory (except the git-ignored index cache).
Exit status: 1 when nothing matches (with --json too, after printing []).`,
		Example: `  memctl search "redis cache"
  memctl search dec-014
  memctl search --scope project:order-service --limit 5 "timeouts"
  memctl search --json "database upgrade" | jq -r '.[].id'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Traces { // raw transcripts kept by extract --keep-trace
				return runTraceSearch(cmd.Context(), f, strings.Join(args, " "), opts.Limit, opts.JSON)
			}
			opts.ScopeSet = cmd.Flags().Changed("scope")
			return runSearch(cmd.Context(), f, strings.Join(args, " "), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.Limit, "limit", "n", 20, "most results to print; 0 = all")
	cmd.Flags().StringVar(&opts.Scope, "scope", "", `only global entries and these scopes, comma-separated ("all", or no --scope: every scope; "project:." the current git project; empty is an error)`)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&opts.Traces, "traces", false, "search the raw transcripts kept by extract --keep-trace instead of the entries")
	return cmd
}

func runSearch(ctx context.Context, f *Factory, query string, opts *searchOptions) error {
	if opts.Limit < 0 {
		return FlagErrorf("invalid --limit %d: want 0 or more", opts.Limit)
	}
	_, c, err := loadCorpus(ctx, f)
	if err != nil {
		return err
	}
	var scopes []string
	if opts.ScopeSet {
		if scopes, err = mdmem.SplitScopes(opts.Scope); err != nil {
			return &FlagError{Err: fmt.Errorf("--scope %q: %w", opts.Scope, err)}
		}
	}
	hits := inject.Search(c, query, scopes, opts.Limit)
	if opts.JSON {
		if hits == nil {
			hits = []inject.SearchHit{}
		}
		if err := f.printJSON(hits); err != nil {
			return err
		}
	}
	if len(hits) == 0 {
		fmt.Fprintf(f.IO.ErrOut, "memctl: no entry matches %q\n", query)
		return &ExitError{Code: ExitFailure}
	}
	if opts.JSON {
		return nil
	}
	for _, h := range hits {
		where := string(h.Place)
		if h.SupersededBy != "" {
			where += ", superseded by " + h.SupersededBy
		}
		fmt.Fprintf(f.IO.Out, "%-10s %s:%d (%s) %s\n  %s\n", h.ID, h.File, h.Line, where, h.Date, h.Snippet)
	}
	return nil
}
