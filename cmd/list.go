package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newListCmd) }

type listOptions struct {
	Place    string
	Category string
	Topic    string
	Scope    string
	JSON     bool
	scopes   []string // parsed --scope; nil: every scope
}

func newListCmd(f *Factory) *cobra.Command {
	opts := &listOptions{}
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List memory entries by section",
		Long: `List prints the entries of MEMORY.md and the topic files, grouped by
section: core profile, pending confirmation, topic files, archive. Filters
narrow the list; --json prints one array of entries for scripts.`,
		Example: `  memctl list
  memctl list --place core
  memctl list --category decision --json
  memctl list --topic db-notes
  memctl list --scope project:billing`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("scope") {
				scopes, err := mdmem.SplitScopes(opts.Scope)
				if err != nil {
					return &FlagError{Err: fmt.Errorf("--scope %q: %w", opts.Scope, err)}
				}
				opts.scopes = scopes
			}
			return runList(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().StringVar(&opts.Place, "place", "", "only entries in: core, pending, topic, archive, other")
	cmd.Flags().StringVar(&opts.Category, "category", "", "only entries of this category")
	cmd.Flags().StringVar(&opts.Topic, "topic", "", "only entries of this topic file")
	cmd.Flags().StringVar(&opts.Scope, "scope", "", `only global entries and these scopes, comma-separated, as in inject ("project:." the current git project; empty is an error)`)
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func runList(ctx context.Context, f *Factory, opts *listOptions) error {
	switch opts.Place {
	case "", "core", "pending", "topic", "archive", "other":
	default:
		return FlagErrorf("unknown --place %q (want core, pending, topic, archive or other)", opts.Place)
	}
	s, err := f.Store(ctx)
	if err != nil {
		return err
	}
	// File by file: the list is printed as the files are read, never held.
	var out *jsonArray
	if opts.JSON {
		out = f.jsonArray()
	}
	group, n := "", 0
	err = mdmem.Walk(ctx, s.Dir, func(d *mdmem.Doc) error {
		f.warnConflicts(d.Conflicts)
		for _, e := range d.Entries {
			if !opts.selects(e) {
				continue
			}
			n++
			if out != nil {
				if err := out.add(e); err != nil {
					return err
				}
				continue
			}
			g := e.File
			if e.Section != "" && e.File == mdmem.MainFile {
				g += " · " + e.Section
			}
			if g != group {
				if group != "" {
					fmt.Fprintln(f.IO.Out)
				}
				fmt.Fprintf(f.IO.Out, "%s\n", g)
				group = g
			}
			fmt.Fprintf(f.IO.Out, "  %s\n", strings.TrimSuffix(strings.TrimPrefix(e.Render(), "- "), "\n"))
		}
		return nil
	})
	if err != nil {
		return err
	}
	if out != nil {
		return out.close()
	}
	if n == 0 {
		fmt.Fprintln(f.IO.ErrOut, "memctl: no entries")
	}
	return nil
}

// selects reports whether the filters keep e.
func (opts *listOptions) selects(e *mdmem.Entry) bool {
	return (opts.Place == "" || string(e.Place) == opts.Place) &&
		(opts.Category == "" || e.Category == opts.Category) &&
		(opts.Topic == "" || e.Topic == opts.Topic) &&
		(opts.scopes == nil || mdmem.InScope(e.Scope, opts.scopes))
}
