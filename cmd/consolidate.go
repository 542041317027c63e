package cmd

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/memctl/memctl/consolidate"
	"github.com/memctl/memctl/inject"
	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

type consolidateOptions struct {
	DryRun bool
	NoLLM  bool
	Full   bool
	JSON   bool
	// Verbose prints every operation, the model's usage and the core's
	// size, and says so when there was nothing to do.
	Verbose bool
	// Quiet prints nothing on stdout (warnings still go to stderr).
	Quiet bool
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
to the model in batches, each with the stored entries retrieval finds for it
(consolidate.neighbors; llm.embedding_model adds retrieval by meaning), so
an update in other words supersedes the entry it makes stale; every
operation it proposes is validated before
anything is written, and invalid ones leave their candidates queued. After
consolidate.max_attempts failed runs (3) a candidate leaves the queue: to
Pending confirmation, or, if it holds a secret or is invalid, to
.memctl/queue/held/ (never committed; listed on every run).
Without one, or with --no-llm, only the deterministic rules run; a
candidate closely related to an entry that no rule decides waits in Pending
confirmation as "may update <id>" (see memctl pending).

The commit lists the operations, the consumed candidates (Memctl-Consumed
trailers) and the token usage. A crash at any point is repaired by the next
run; every candidate is applied exactly once. Nothing to do, no commit.

Quiet for cron: a run with nothing to do prints nothing; a run that commits
prints one summary line (-v: every operation, the model's usage, the core's
size); stderr speaks only when something needs a person (a candidate newly
held, the model unusable). -q prints nothing on stdout at all.`,
		Example: `  memctl consolidate
  memctl consolidate --dry-run
  memctl consolidate -v
  memctl consolidate --no-llm --json
  memctl consolidate --allow-delete   # keep entries you deleted by hand deleted`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if opts.Verbose && opts.Quiet {
				return FlagErrorf("-v and -q contradict each other")
			}
			return runConsolidate(cmd.Context(), f, opts)
		},
	}
	cmd.Flags().BoolVarP(&opts.DryRun, "dry-run", "n", false, "print the diff and the operations; change nothing")
	cmd.Flags().BoolVar(&opts.NoLLM, "no-llm", false, "deterministic rules only, even with an LLM configured")
	cmd.Flags().BoolVar(&opts.Full, "full", false, "read and check every file of the memory, not only those the candidates touch (the match cache is rebuilt where stale)")
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the report as JSON")
	cmd.Flags().BoolVarP(&opts.Verbose, "verbose", "v", false, "print every operation, the model's usage and the core's size")
	cmd.Flags().BoolVarP(&opts.Quiet, "quiet", "q", false, "print nothing on stdout (warnings still go to stderr)")
	cmd.Flags().BoolVar(&opts.AllowDelete, "allow-delete", false, allowDeleteUsage)
	return cmd
}

// runConsolidate applies retention, runs the consolidation and reports
// it; the exit code says when the model could not be used.
func runConsolidate(ctx context.Context, f *Factory, opts *consolidateOptions) error {
	s, err := f.Store(ctx, "consolidate", "llm", "inject", "add", "git", "files")
	if err != nil {
		return err
	}
	if opts.AllowDelete {
		s.Config.Git.AllowHandDelete = true
	}
	o := consolidateRunOptions(f, opts)
	if opts.DryRun {
		if err := previewRetention(ctx, f, s); err != nil {
			return err
		}
	} else if err := applyRetention(ctx, f, s); err != nil {
		return err
	}
	rep, err := consolidate.Run(ctx, s, o)
	if err != nil {
		return err
	}
	defer printHeldFiles(f, s.Dir, rep, opts.Verbose)
	warnAfterConsolidate(ctx, f, s, rep)
	if opts.JSON {
		if err := f.printJSON(rep); err != nil {
			return err
		}
		return noModelExit(rep)
	}
	if !opts.Quiet || rep.DryRun {
		printConsolidate(f.IO.Out, rep, opts)
	}
	return noModelExit(rep)
}

// consolidateRunOptions are the run's options: diagnostics on stderr
// (the model's retries only with -v or on a terminal) and, on a
// terminal, a progress bar of the LLM batches.
func consolidateRunOptions(f *Factory, opts *consolidateOptions) consolidate.Options {
	var mu sync.Mutex
	o := consolidate.Options{
		DryRun: opts.DryRun,
		NoLLM:  opts.NoLLM,
		Full:   opts.Full,
		Getenv: f.Getenv,
		Now:    f.Now,
		// What consolidate needs of inject (it does not import it).
		Measure:     inject.CoreMeasure{},
		Retrieval:   inject.CachedRetrieval{},
		VectorCache: inject.VectorCache{},
		Log: func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(f.IO.ErrOut, "memctl: "+format+"\n", args...)
		},
	}
	o.Trace = func(string, ...any) {} // the warning after the run sums the failures up
	if opts.Verbose || f.IO.ErrTTY {
		o.Trace = o.Log
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
	return o
}

// warnAfterConsolidate prints on stderr what a person should know after
// a run: the hand edits committed, batches the model could not answer,
// and a core profile over its limits.
func warnAfterConsolidate(ctx context.Context, f *Factory, s *mdmem.Store, rep *consolidate.Report) {
	printHandEdits(f, rep.HandEdits...)
	if rep.LLMStatus == "partial" || rep.LLMStatus == "unavailable" {
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: the model could not be used for %d batch(es): %s; their candidates stay queued\n",
			rep.LLM.FailedBatches, rep.LLMError)
	}
	if mem, err := mdmem.LoadMain(ctx, s.Dir); err == nil { // the core is in MEMORY.md
		if w := coreFitWarning(f, s, mem.Main.Entries); w != "" {
			fmt.Fprintf(f.IO.ErrOut, "memctl: warning: %s\n", w)
		}
	}
}

// printConsolidate prints the text report of a run: nothing for a no-op
// (unless -v), the diff of a dry run, the operations (-v or dry run), a
// one-line summary, and with -v the model's usage and the core profile.
func printConsolidate(w io.Writer, rep *consolidate.Report, opts *consolidateOptions) {
	if rep.NothingToDo {
		if opts.Verbose {
			fmt.Fprintln(w, "consolidate: nothing to do")
		}
		return
	}
	if rep.DryRun {
		fmt.Fprint(w, rep.Diff)
	}
	if rep.Plan != nil && (opts.Verbose || rep.DryRun) {
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
	llm := ""
	if rep.Mode == "llm" && rep.LLM.Calls > 0 && !opts.Verbose {
		llm = fmt.Sprintf("; LLM %d calls, %d tokens", rep.LLM.Calls, rep.LLM.PromptTokens+rep.LLM.CompletionTokens)
	}
	fmt.Fprintf(w, "consolidate: %d queued: %s (%s%s)\n", rep.Queued, rep.Summary, verb, llm)
	if !opts.Verbose {
		return
	}
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
}

// noModelExit makes a run whose model could not be used at all exit with
// ExitNoModel, so cron reports an outage instead of silence.
func noModelExit(rep *consolidate.Report) error {
	if rep.LLMStatus != "unavailable" {
		return nil
	}
	return &ExitError{Code: ExitNoModel}
}

// printHeldFiles tells about the candidates moved to .memctl/queue/held/
// by this run: they never enter the memory until a person acts. Candidates
// held by earlier runs are listed with -v (and counted by queue --held and
// stats), so cron does not mail the same warning every run.
func printHeldFiles(f *Factory, dir string, rep *consolidate.Report, all bool) {
	list := rep.Quarantined
	if all {
		list = rep.HeldFiles
	}
	if len(list) == 0 {
		return
	}
	w := f.IO.ErrOut
	what := "newly held"
	if all {
		what = "held"
	}
	fmt.Fprintf(w, "memctl: %d candidate(s) %s in %s/ will never enter the memory as they are:\n", len(list), what, consolidate.HeldDir)
	for i, h := range list {
		if i == 20 {
			fmt.Fprintf(w, "memctl:   … and %d more\n", len(list)-20)
			break
		}
		fmt.Fprintf(w, "memctl:   %s: %s\n", h.Candidate, h.Reason)
	}
	fmt.Fprintf(w, "memctl: edit one (remove the secret, fix it) and move it back to %s/, or delete it and its .reason file (`memctl queue --held` lists them)\n", filepath.Join(dir, filepath.FromSlash(mdmem.QueueDir)))
}

func shortHash(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// previewRetention says what applyRetention would do, changing nothing
// (--dry-run).
func previewRetention(ctx context.Context, f *Factory, s *mdmem.Store) error {
	m, err := s.Load(ctx)
	if err != nil {
		return err
	}
	var archive, forget []string
	for _, d := range mdmem.RetentionDue(m, f.Now(), 0, s.Config.Consolidate.ArchiveDays) {
		if d.Action == "archive" {
			archive = append(archive, d.ID)
		} else {
			forget = append(forget, d.ID)
		}
	}
	if len(archive) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "consolidate: retention (dry run): would archive %s (expired)\n", strings.Join(archive, ", "))
	}
	if len(forget) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "consolidate: retention (dry run): would forget %s (archived more than %d days ago)\n", strings.Join(forget, ", "), s.Config.Consolidate.ArchiveDays)
	}
	return nil
}

// applyRetention archives expired entries and forgets archived entries
// past consolidate.archive_days before the run (its own commits).
func applyRetention(ctx context.Context, f *Factory, s *mdmem.Store) error {
	r, err := mdmem.ApplyRetention(ctx, s, f.Now())
	if err != nil {
		return fmt.Errorf("retention: %w", err)
	}
	printHandEdits(f, r.HandEdit)
	if len(r.Archived) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "consolidate: retention: archived %s (expired)\n", strings.Join(r.Archived, ", "))
	}
	if len(r.Deleted) > 0 {
		fmt.Fprintf(f.IO.ErrOut, "consolidate: retention: forgot %s (archived more than %d days ago; tombstones written)\n", strings.Join(r.Deleted, ", "), s.Config.Consolidate.ArchiveDays)
	}
	return nil
}
