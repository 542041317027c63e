package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/memctl/memctl/consolidate"
	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

type consolidateOptions struct {
	DryRun bool
	NoLLM  bool
	JSON   bool
	// AllowDelete keeps entries deleted by hand deleted.
	AllowDelete bool
}

func init() { register(newConsolidateCmd) }

func newConsolidateCmd(f *Factory) *cobra.Command {
	opts := &consolidateOptions{}
	cmd := &cobra.Command{
		Use:   "consolidate",
		Short: "Fold queued candidates into the memory (run from cron)",
		Long: `Consolidate takes the memory's lock, commits uncommitted hand edits as their
own commit (memory files only; entries deleted by hand are restored into the
archive unless --allow-delete, ids written twice are renumbered), and folds the queued candidates into MEMORY.md and the topic
files in one commit: exact and near duplicates merge (provenance kept),
newer statements supersede older ones (which move to the archive, never
deleted), instruction-like candidates wait in Pending confirmation (at
most consolidate.max_pending, 50: beyond that they stay queued), and the
core profile (Pending confirmation not counted) is kept within its line, byte and token limits by moving the
lowest-value entries to topic files (entries the agent reports using with
memctl used stay).

With an LLM configured (llm.model, or MEMCTL_MODEL; OPENAI_BASE_URL and
OPENAI_API_KEY for the endpoint), the candidates the rules cannot settle go
to the model in batches; every operation it proposes is validated before
anything is written, and invalid ones leave their candidates queued. After
consolidate.max_attempts failed runs (3) a candidate leaves the queue: to
Pending confirmation, or, if it holds a secret or is invalid, to
.memctl/queue/held/ (never committed; listed on every run).
Without one, or with --no-llm, only the deterministic rules run.

The commit lists the operations, the consumed candidates (Memctl-Consumed
trailers) and the token usage. A crash at any point is repaired by the next
run; every candidate is applied exactly once. Nothing to do, no commit.`,
		Example: `  memctl consolidate
  memctl consolidate --dry-run
  memctl consolidate --no-llm --json
  memctl consolidate --allow-delete   # keep entries you deleted by hand deleted`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runConsolidate(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.DryRun, "dry-run", "n", false, "print the diff and the operations; change nothing")
	cmd.Flags().BoolVar(&opts.NoLLM, "no-llm", false, "deterministic rules only, even with an LLM configured")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	cmd.Flags().BoolVar(&opts.AllowDelete, "allow-delete", false, allowDeleteUsage)
	return cmd
}

func runConsolidate(ctx context.Context, f *Factory, opts *consolidateOptions) error {
	s, err := f.Store(ctx, "consolidate", "llm", "inject", "add")
	if err != nil {
		return err
	}
	if opts.AllowDelete {
		s.Config.Git.AllowHandDelete = true
	}
	var mu sync.Mutex
	o := consolidate.Options{
		DryRun: opts.DryRun,
		NoLLM:  opts.NoLLM,
		Getenv: f.Getenv,
		Now:    f.Now,
		Log: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(f.IO.ErrOut, "memctl: "+format+"\n", args...)
		},
	}
	if f.IO.ErrTTY {
		o.Progress = func(done, total int) {
			mu.Lock()
			defer mu.Unlock()
			const width = 30
			n := width * done / max(total, 1)
			fmt.Fprintf(f.IO.ErrOut, "\rconsolidate: LLM [%s%s] %d/%d batches", strings.Repeat("#", n), strings.Repeat(".", width-n), done, total)
			if done == total {
				fmt.Fprintln(f.IO.ErrOut)
			}
		}
	}
	rep, err := consolidate.Run(ctx, s, o)
	if err != nil {
		return err
	}
	defer printHeldFiles(f, s.Dir, rep)
	printHandEdits(f, rep.HandEdits...)
	if rep.LLMStatus == "partial" || rep.LLMStatus == "unavailable" {
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: the model could not be used for %d batch(es): %s; their candidates stay queued\n",
			rep.LLM.FailedBatches, rep.LLMError)
	}
	if mem, err := s.Load(ctx); err == nil {
		if w := coreFitWarning(f, s, mem); w != "" {
			fmt.Fprintf(f.IO.ErrOut, "memctl: warning: %s\n", w)
		}
	}
	if opts.JSON {
		enc := json.NewEncoder(f.IO.Out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
		return noModelExit(rep)
	}
	w := f.IO.Out
	if rep.NothingToDo {
		fmt.Fprintln(w, "consolidate: nothing to do")
		return nil
	}
	if rep.DryRun {
		fmt.Fprint(w, rep.Diff)
	}
	if rep.Plan != nil {
		for _, op := range rep.Plan.Ops {
			fmt.Fprintln(w, consolidate.FormatOp(op))
		}
	}
	verb := "committed " + shortHash(rep.Commit)
	switch {
	case rep.DryRun:
		verb = "dry run, nothing written"
	case rep.Commit == "":
		verb = "nothing committed"
	}
	fmt.Fprintf(w, "consolidate: %d queued: %s (%s)\n", rep.Queued, rep.Summary, verb)
	if rep.Mode == "llm" {
		est := ""
		if rep.LLM.Estimated {
			est = " (estimated)"
		}
		fmt.Fprintf(w, "consolidate: LLM %s: %d calls, %d prompt + %d completion tokens%s\n", rep.Model, rep.LLM.Calls, rep.LLM.PromptTokens, rep.LLM.CompletionTokens, est)
	}
	if rep.Plan != nil {
		fmt.Fprintf(w, "consolidate: core profile %s\n", rep.Plan.CoreAfter)
		fmt.Fprintf(w, "consolidate: pending confirmation %s\n", rep.Plan.Pending)
	}
	return noModelExit(rep)
}

// noModelExit makes a run whose model could not be used at all exit with
// ExitNoModel, so cron reports an outage instead of silence.
func noModelExit(rep *consolidate.Report) error {
	if rep.LLMStatus != "unavailable" {
		return nil
	}
	return &ExitError{Code: ExitNoModel}
}

// printHeldFiles reminds, every run, of the candidates quarantined in
// .memctl/queue/held/: they never enter the memory until a person acts.
func printHeldFiles(f *Factory, dir string, rep *consolidate.Report) {
	if len(rep.HeldFiles) == 0 {
		return
	}
	w := f.IO.ErrOut
	fmt.Fprintf(w, "memctl: %d candidate(s) wait in %s/ and will never enter the memory as they are:\n", len(rep.HeldFiles), consolidate.HeldDir)
	for i, h := range rep.HeldFiles {
		if i == 20 {
			fmt.Fprintf(w, "memctl:   … and %d more\n", len(rep.HeldFiles)-20)
			break
		}
		fmt.Fprintf(w, "memctl:   %s: %s\n", h.Candidate, h.Reason)
	}
	fmt.Fprintf(w, "memctl: edit one (remove the secret, fix it) and move it back to %s/, or delete it and its .reason file\n", filepath.Join(dir, filepath.FromSlash(mdmem.QueueDir)))
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
