package cmd

import (
	"context"
	"fmt"

	"github.com/memctl/memctl/consolidate"
	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newQueueCmd) }

type queueOptions struct {
	JSON bool
	Held bool
}

func newQueueCmd(f *Factory) *cobra.Command {
	opts := &queueOptions{}
	cmd := &cobra.Command{
		Use:   "queue",
		Short: "List candidate memories awaiting consolidation",
		Long: `Queue lists the candidates in .memctl/queue/, oldest first. Queue files
that cannot be read (invalid JSON, a symbolic link or anything but a regular
file) are reported on stderr and left in place; the next consolidate moves
them to .memctl/queue/held/ with the reason.

Candidates consolidation can never turn into entries (one holding a secret,
or an invalid one that kept failing) are moved to .memctl/queue/held/ and
need a person: --held lists them with the reason. Edit the file and move it
back to .memctl/queue/ to retry it, or delete it.`,
		Example: `  memctl queue
  memctl queue --json | jq length
  memctl queue --held`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runQueue(cmd.Context(), f, opts) },
	}
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&opts.Held, "held", false, "list the held candidates that need a person instead")
	return cmd
}

func runQueue(ctx context.Context, f *Factory, opts *queueOptions) error {
	s, err := f.Store(ctx)
	if err != nil {
		return err
	}
	held, err := consolidate.HeldFiles(s.Dir)
	if err != nil {
		return err
	}
	if opts.Held {
		if opts.JSON {
			return f.printJSON(held)
		}
		for _, h := range held {
			fmt.Fprintf(f.IO.Out, "%s  %s/%s.json  %s\n", h.Candidate, consolidate.HeldDir, h.Candidate, h.Reason)
		}
		if len(held) == 0 {
			fmt.Fprintln(f.IO.ErrOut, "memctl: no held candidates")
		}
		return nil
	}
	cands, bad, err := mdmem.ReadQueue(ctx, s.Dir)
	if err != nil {
		return err
	}
	for _, b := range bad {
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: %s: %v (left in place)\n", b.File, b.Err)
	}
	if opts.JSON {
		views := make([]mdmem.CandidateJSON, len(cands))
		for i, c := range cands {
			views[i] = c.JSON()
		}
		return f.printJSON(views)
	}
	for _, c := range cands {
		fmt.Fprintf(f.IO.Out, "%s  %-10s %s\n", c.ID, c.Category, snippet(c.Content, 80))
	}
	switch {
	case len(cands) == 0 && len(bad) == 0:
		fmt.Fprintln(f.IO.ErrOut, "memctl: the queue is empty")
	case len(bad) > 0:
		fmt.Fprintf(f.IO.ErrOut, "memctl: %d readable %s; %d queue %s cannot be read (see above): the next consolidate moves %s to %s/\n",
			len(cands), pluralize(len(cands), "candidate", "candidates"), len(bad), pluralize(len(bad), "file", "files"), pluralize(len(bad), "it", "them"), consolidate.HeldDir)
	}
	if len(held) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "memctl: %d held %s a person: see `memctl queue --held`\n", len(held), pluralize(len(held), "candidate needs", "candidates need"))
	}
	return nil
}

// snippet shortens s to at most n runes on one line.
func snippet(s string, n int) string {
	s = mdmem.OneLine(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
