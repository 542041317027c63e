package cmd

import (
	"context"
	"fmt"
	"strings"

	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newShowCmd) }

type showOptions struct {
	IDs  []string
	JSON bool
}

func newShowCmd(f *Factory) *cobra.Command {
	opts := &showOptions{}
	cmd := &cobra.Command{
		Use:   "show <id>...",
		Short: "Show entries (or queued candidates) with all their metadata",
		Long: `Show prints one or more entries with every metadata field and where they
live (file and line), from anywhere in the memory: core profile, pending
confirmation, topic files and archive. A candidate id (c…) shows the queued
candidate. --json prints an array, one object per id, in the order given.`,
		Example: `  memctl show pref-001
  memctl show dec-014 dec-007 --json
  memctl show pref-001 --json | jq -r '.[0].content'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.IDs = args
			return runShow(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func runShow(ctx context.Context, f *Factory, opts *showOptions) error {
	s, err := f.Store(ctx)
	if err != nil {
		return err
	}
	// File by file, keeping copies of the entries asked for only.
	found := map[string][]*mdmem.Entry{}
	for _, id := range opts.IDs {
		found[id] = nil
	}
	err = mdmem.Walk(ctx, s.Dir, func(d *mdmem.Doc) error {
		f.warnConflicts(d.Conflicts)
		for _, e := range d.Entries {
			if all, ok := found[e.ID]; ok {
				found[e.ID] = append(all, e.Detach())
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	var queue map[string]*mdmem.Candidate
	out := []any{}
	for _, id := range opts.IDs {
		if all := found[id]; len(all) > 0 {
			if len(all) > 1 {
				var where []string
				for _, e := range all {
					where = append(where, fmt.Sprintf("%s:%d", e.File, e.Line))
				}
				fmt.Fprintf(f.IO.ErrOut, "memctl: warning: %d entries have id %s (%s); the next memctl write (consolidate, import) renumbers all but the first\n",
					len(all), id, strings.Join(where, ", "))
			}
			for _, e := range all {
				out = append(out, e)
			}
			continue
		}
		if queue == nil {
			cands, _, err := mdmem.ReadQueue(ctx, s.Dir)
			if err != nil {
				return err
			}
			queue = map[string]*mdmem.Candidate{}
			for _, c := range cands {
				queue[c.ID] = c
			}
		}
		if c := queue[id]; c != nil {
			out = append(out, c.JSON())
			continue
		}
		hint := "`memctl list` shows the entries, `memctl queue` the candidates"
		known, err := mdmem.IDsIn(ctx, s.Dir)
		if err != nil {
			return err
		}
		if dym := mdmem.DidYouMean(mdmem.SuggestIDs(id, known)); dym != "" {
			hint = dym
		}
		return &HintError{Err: fmt.Errorf("no entry or queued candidate %q", id), Hint: hint}
	}
	if opts.JSON {
		return f.printJSON(out) // always an array, whatever the number of ids
	}
	for i, v := range out {
		if i > 0 {
			fmt.Fprintln(f.IO.Out)
		}
		switch v := v.(type) {
		case *mdmem.Entry:
			printEntry(f, v)
		case mdmem.CandidateJSON:
			printCandidate(f, queue[v.CandidateID])
		}
	}
	return nil
}

func printField(f *Factory, name, value string) {
	if value != "" {
		fmt.Fprintf(f.IO.Out, "%-13s %s\n", name+":", value)
	}
}

func printEntry(f *Factory, e *mdmem.Entry) {
	j := e.JSON()
	printField(f, "id", j.ID)
	printField(f, "category", j.Category)
	printField(f, "content", j.Content)
	printField(f, "source", j.Source)
	if !j.CreatedAt.IsZero() {
		printField(f, "created", mdmem.FormatTime(j.CreatedAt))
	}
	if !j.UpdatedAt.IsZero() {
		printField(f, "updated", mdmem.FormatTime(j.UpdatedAt))
	}
	if !j.ExpiresAt.IsZero() {
		printField(f, "expires", mdmem.FormatTime(j.ExpiresAt))
	}
	printField(f, "scope", strings.Join(j.Scope, ", "))
	if j.Confidence != nil {
		printField(f, "confidence", fmt.Sprint(*j.Confidence))
	}
	printField(f, "refs", strings.Join(j.Refs, ", "))
	printField(f, "tags", strings.Join(j.Tags, ", "))
	if j.SupersededBy != "" {
		s := j.SupersededBy
		if !j.SupersededOn.IsZero() {
			s += " on " + mdmem.FormatTime(j.SupersededOn)
		}
		printField(f, "superseded by", s)
	}
	printField(f, "see", strings.Join(j.See, ", "))
	printField(f, "notes", strings.Join(j.Notes, "; "))
	where := string(j.Place)
	if j.Section != "" {
		where += " (" + j.Section + ")"
	}
	printField(f, "place", where)
	printField(f, "file", fmt.Sprintf("%s:%d", j.File, j.Line))
}

func printCandidate(f *Factory, c *mdmem.Candidate) {
	printField(f, "candidate", c.ID)
	printField(f, "category", c.Category)
	printField(f, "content", c.Content)
	printField(f, "source", c.Source)
	printField(f, "created", mdmem.FormatTime(c.CreatedAt))
	printField(f, "scope", strings.Join(c.Scope, ", "))
	if c.Confidence != nil {
		printField(f, "confidence", fmt.Sprint(*c.Confidence))
	}
	printField(f, "refs", strings.Join(c.Refs, ", "))
	printField(f, "tags", strings.Join(c.Tags, ", "))
	printField(f, "topic", c.Topic)
	printField(f, "queued", mdmem.FormatTime(c.QueuedAt))
	printField(f, "place", "queue (awaiting consolidation)")
}
