package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/memctl/memctl/consolidate"
	"github.com/memctl/memctl/consolidate/transcript"
	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newExtractCmd) }

type extractOptions struct {
	Transcript    string
	CatchUp       bool
	Format        string
	Session       string
	Scope         []string
	MinConfidence float64
	DryRun        bool
	Full          bool
	JSON          bool
	Quiet         bool
	KeepTrace     bool
	TraceDays     int
	set           map[string]bool // the flags given (they override [extract])
}

func newExtractCmd(f *Factory) *cobra.Command {
	opts := &extractOptions{}
	cmd := &cobra.Command{
		Use:   "extract (--transcript FILE | --catch-up) [flags]",
		Short: "Distil a session transcript into queued candidate memories (LLM)",
		Long: `Extract reads an agent's session transcript and queues the few stable
memories worth keeping, for the next consolidate (the seed's section 3.2).

It summarises in layers first: a dialogue digest (about 2,000 tokens) and a
tool-call digest (about 1,000); a long transcript is cut into chunks whose
digests are digested again, so any length fits the model's context. Then
the model proposes candidates in the entry schema, with the current core
profile in the prompt so that known facts are not proposed again: only
stable information reusable across sessions, inferences marked
source=inference. Candidates below --min-confidence (0.7) are dropped; the
rest go through the same checks as memctl add, skip what is already queued
or in memory, and are queued with refs session:<id> and turn:<n>.

Turn n is line n of a JSONL or text transcript, message n of OpenAI JSON.
extract keeps, per transcript, how far it read (.memctl/cache/extract/):
the same transcript twice queues nothing new, and a grown one is read only
for its new part (--full reads it whole again).

Formats (--format, detected from the content by default):
  claude  Claude Code session JSONL (~/.claude/projects/<dir>/<session>.jsonl):
          user/assistant/summary records; text, tool_use and tool_result
          blocks; subagent (isSidechain) turns go with the tool calls;
          thinking, snapshots and unknown record types are skipped
  codex   Codex CLI rollout JSONL (~/.codex/sessions/…/rollout-*.jsonl)
  openai  OpenAI chat messages: a JSON array, {"messages": [...]}, or JSON Lines
  text    plain text or Markdown; paragraphs are turns ("User:", "Assistant:")

A malformed record stops extract with the line named and nothing queued; a
torn last line (a live transcript mid-write) is skipped with a warning and
read once it is whole. extract needs an LLM (llm.model or MEMCTL_MODEL; see
memctl consolidate --help): without one, or when the model fails, it exits
4 and queues nothing. --dry-run without a model prints what the model
would be sent (the dialogue and tool lines, secrets masked) and exits 0.

--catch-up extracts every transcript a SessionEnd or PreCompact hook asked
for whose extract has not finished (no model then, the model down, the
process killed), oldest first; a transcript no longer there is dropped
from the list, with a note.

--keep-trace keeps the transcript itself (L3, raw) in .memctl/traces/,
which git ignores, so that memctl search --traces finds what the digest left
out; traces not updated for --trace-days (90) are removed on the next
--keep-trace run.`,
		Example: `  memctl extract --transcript ~/.claude/projects/-home-me-app/3f2a….jsonl
  memctl extract --catch-up
  memctl extract --transcript chat.json --format openai --session chat-42
  memctl extract --transcript rollout.jsonl --format codex --scope project:app
  memctl extract --transcript notes.md --dry-run
  memctl extract --transcript session.jsonl --json | jq '.candidate_ids'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if (opts.Transcript == "") == !opts.CatchUp {
				return FlagErrorf("give one of --transcript FILE and --catch-up")
			}
			if opts.CatchUp && (opts.Session != "" || len(opts.Scope) > 0 || opts.Full) {
				return FlagErrorf("--catch-up takes each transcript's session and scope as its hook gave them: no --session, --scope or --full")
			}
			if !validFormat(opts.Format) {
				return FlagErrorf("invalid --format %q: want %s", opts.Format, strings.Join(transcript.Names, ", "))
			}
			if opts.TraceDays < 0 {
				return FlagErrorf("invalid --trace-days %d: want 0 or more", opts.TraceDays)
			}
			if opts.MinConfidence < 0 || opts.MinConfidence > 1 {
				return FlagErrorf("invalid --min-confidence %v: want a number in [0,1]", opts.MinConfidence)
			}
			opts.set = map[string]bool{}
			for _, name := range []string{"min-confidence", "keep-trace", "trace-days"} {
				opts.set[name] = cmd.Flags().Changed(name)
			}
			return runExtract(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Transcript, "transcript", "", "the session transcript file")
	fl.BoolVar(&opts.CatchUp, "catch-up", false, "extract the transcripts hooks asked for whose extract did not finish")
	fl.StringVar(&opts.Format, "format", transcript.Auto, "transcript format: "+strings.Join(transcript.Names, ", "))
	fl.StringVar(&opts.Session, "session", "", "session id for the refs (default: the transcript's own, else its file name)")
	fl.StringArrayVar(&opts.Scope, "scope", nil, "scope the model may give candidates, e.g. project:app (repeatable or comma-separated)")
	fl.Float64Var(&opts.MinConfidence, "min-confidence", 0, "keep candidates with at least this confidence (default: extract.min_confidence in config.toml, 0.7 unless set)")
	fl.BoolVarP(&opts.DryRun, "dry-run", "n", false, "print the candidates; queue nothing, keep no offset")
	fl.BoolVar(&opts.Full, "full", false, "read the whole transcript, not only the part after the last extract")
	fl.BoolVar(&opts.JSON, "json", false, "print the report as JSON (digests, proposals, queued ids, usage)")
	fl.BoolVarP(&opts.Quiet, "quiet", "q", false, "print only the queued candidate ids")
	fl.BoolVar(&opts.KeepTrace, "keep-trace", false, "keep the transcript in .memctl/traces/ (never committed) for memctl search --traces (default: extract.keep_trace)")
	fl.IntVar(&opts.TraceDays, "trace-days", 0, "with --keep-trace: remove kept traces not updated for this many days; 0 keeps them (default: extract.trace_days in config.toml, 90 unless set)")
	return cmd
}

func validFormat(f string) bool {
	for _, n := range transcript.Names {
		if f == n {
			return true
		}
	}
	return false
}

func runExtract(ctx context.Context, f *Factory, opts *extractOptions) error {
	s, err := f.Store(ctx, "llm", "add", "consolidate", "extract")
	if err != nil {
		return err
	}
	// The [extract] settings, unless a flag says otherwise for this run.
	if !opts.set["min-confidence"] {
		opts.MinConfidence = s.Config.Extract.MinConfidence
	}
	if !opts.set["keep-trace"] {
		opts.KeepTrace = s.Config.Extract.KeepTrace
	}
	if !opts.set["trace-days"] {
		opts.TraceDays = s.Config.Extract.TraceDays
	}
	if opts.CatchUp {
		return runCatchUp(ctx, f, s, opts)
	}
	var scopes []string
	if len(opts.Scope) > 0 {
		if scopes, err = mdmem.SplitScopes(opts.Scope...); err != nil {
			return &FlagError{Err: fmt.Errorf("--scope: %w", err)}
		}
	}
	rep, err := extractOne(ctx, f, s, opts, opts.Transcript, opts.Session, scopes)
	if err != nil {
		return err
	}
	if opts.JSON {
		return f.printJSON(rep)
	}
	printExtract(f, opts, rep)
	return nil
}

// extractOne extracts one transcript, with the exit status of a model
// that cannot be used.
func extractOne(ctx context.Context, f *Factory, s *mdmem.Store, opts *extractOptions, path, session string, scopes []string) (*consolidate.ExtractReport, error) {
	rep, err := consolidate.ExtractTranscript(ctx, s, consolidate.ExtractOptions{
		Path: path, Format: opts.Format, SessionID: session, Scopes: scopes,
		MinConfidence: opts.MinConfidence, DryRun: opts.DryRun, Full: opts.Full, KeepTrace: opts.KeepTrace, TraceDays: opts.TraceDays,
		Getenv: f.Getenv, Now: f.Now,
		Log: func(format string, args ...any) {
			if !opts.Quiet && !opts.JSON {
				fmt.Fprintf(f.IO.ErrOut, "memctl: "+format+"\n", args...)
			}
		},
	})
	if rep != nil {
		for _, w := range rep.Warnings {
			fmt.Fprintf(f.IO.ErrOut, "memctl: warning: %s\n", w)
		}
	}
	var llmErr *consolidate.LLMError
	switch {
	case errors.Is(err, consolidate.ErrNoModel):
		return nil, &ExitError{Code: ExitNoModel, Msg: err.Error() + "; nothing was queued (--dry-run shows what would be sent)"}
	case errors.As(err, &llmErr):
		return nil, &ExitError{Code: ExitNoModel, Msg: err.Error() + "; nothing was queued, the transcript will be read again next time"}
	}
	return rep, err
}

// runCatchUp is extract --catch-up: each owed transcript in turn, oldest
// first; the first model failure stops it (the rest stay owed).
func runCatchUp(ctx context.Context, f *Factory, s *mdmem.Store, opts *extractOptions) error {
	owed, err := consolidate.OwedExtracts(s.Dir)
	if err != nil {
		return err
	}
	reps := []*consolidate.ExtractReport{}
	for _, o := range owed {
		if _, err := os.Stat(o.Path); errors.Is(err, fs.ErrNotExist) {
			if !opts.DryRun {
				if err := consolidate.DropOwed(s.Dir, o.Path); err != nil {
					return err
				}
			}
			fmt.Fprintf(f.IO.ErrOut, "memctl: %s is gone (session %s); dropped from the transcripts to catch up on\n", o.Path, o.Session)
			continue
		}
		rep, err := extractOne(ctx, f, s, opts, o.Path, o.Session, o.Scopes)
		if err != nil {
			return err
		}
		if opts.JSON {
			reps = append(reps, rep)
			continue
		}
		printExtract(f, opts, rep)
	}
	if opts.JSON {
		return f.printJSON(reps)
	}
	if len(owed) == 0 && !opts.Quiet {
		fmt.Fprintln(f.IO.Out, "extract: no transcript to catch up on")
	}
	return nil
}

// printExtract prints what one extraction proposed and queued.
func printExtract(f *Factory, opts *extractOptions, rep *consolidate.ExtractReport) {
	w := f.IO.Out
	if opts.Quiet {
		for _, id := range rep.Queued {
			fmt.Fprintln(w, id)
		}
		return
	}
	if rep.Trace != "" {
		defer fmt.Fprintf(w, "extract: transcript kept as %s\n", rep.Trace)
	}
	for _, p := range rep.Pruned {
		fmt.Fprintf(f.IO.ErrOut, "memctl: removed trace %s (older than --trace-days)\n", p)
	}
	if rep.NothingNew {
		fmt.Fprintf(w, "extract: nothing new in %s (%s format, session %s)\n", rep.Transcript, rep.Format, rep.SessionID)
		return
	}
	if rep.Offline {
		fmt.Fprintf(w, "extract: dry run without a model: the model would digest these %d dialogue and %d tool lines of %s (%s format, session %s, turns from %d):\n",
			len(rep.DialogueLines), len(rep.ToolLines), rep.Transcript, rep.Format, rep.SessionID, rep.FromTurn)
		for _, l := range rep.DialogueLines {
			fmt.Fprintln(w, "  "+l)
		}
		for _, l := range rep.ToolLines {
			fmt.Fprintln(w, "  "+l)
		}
		return
	}
	for _, p := range rep.Proposals {
		c := p.Candidate
		conf := ""
		if c.Confidence != nil {
			conf = fmt.Sprintf(" · conf %.2f", *c.Confidence)
		}
		state := "queue"
		if p.Dropped != "" {
			state = "drop "
		}
		content := c.Content
		if p.Secret {
			content = "(text withheld)"
		}
		fmt.Fprintf(w, "%s  %s: %s (%s%s · %s)", state, c.Category, content, c.Source, conf, strings.Join(c.Refs, " "))
		if p.Lowered != "" {
			fmt.Fprintf(w, " — not the person's words: %s", p.Lowered)
		}
		if p.Dropped != "" {
			fmt.Fprintf(w, " — %s", p.Dropped)
		}
		fmt.Fprintln(w)
	}
	verb := fmt.Sprintf("queued %d", len(rep.Queued))
	if rep.DryRun {
		verb = "dry run, nothing queued"
	}
	fmt.Fprintf(w, "extract: %s, session %s, turns from %d: %d read, %d proposed, %s\n", rep.Format, rep.SessionID, rep.FromTurn, rep.Turns, len(rep.Proposals), verb)
	fmt.Fprintf(w, "extract: LLM %s: %d calls, %d prompt + %d completion tokens\n", rep.Model, rep.Usage.Calls, rep.Usage.PromptTokens, rep.Usage.CompletionTokens)
}

// runTraceSearch is memctl search --traces: the turns of the transcripts
// kept by extract --keep-trace that hold the query's words.
func runTraceSearch(ctx context.Context, f *Factory, query string, limit int, asJSON bool) error {
	s, err := f.Store(ctx)
	if err != nil {
		return err
	}
	hits, err := transcript.SearchTraces(ctx, s.Dir, query, limit)
	if err != nil {
		return err
	}
	if asJSON {
		if hits == nil {
			hits = []transcript.TraceHit{}
		}
		if err := f.printJSON(hits); err != nil {
			return err
		}
	}
	if len(hits) == 0 {
		fmt.Fprintf(f.IO.ErrOut, "memctl: no kept transcript matches %q (extract --keep-trace keeps them)\n", query)
		return &ExitError{Code: ExitFailure}
	}
	if !asJSON {
		for _, h := range hits {
			fmt.Fprintf(f.IO.Out, "%s turn %d (%s, %d of the words)\n  %s\n", h.File, h.Turn, h.Role, h.Score, h.Snippet)
		}
	}
	return nil
}
