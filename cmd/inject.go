package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/memctl/memctl/consolidate"
	"github.com/memctl/memctl/inject"
	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func init() { register(newInjectCmd) }

type injectOptions struct {
	injectFlags
	Task     string
	Tags     []string
	Scope    string
	Format   string
	NoCache  bool
	Write    string
	Meta     string
	MaxChars int
	JSON     bool
}

func newInjectCmd(f *Factory) *cobra.Command {
	opts := &injectOptions{}
	cmd := &cobra.Command{
		Use:   "inject [--task TEXT] [flags]",
		Short: "Print the token-budgeted memory block for a task",
		Long: `Print the memory block an agent puts in its prompt before a model call.

L1, the core profile (MEMORY.md's core subsections), comes first: whole
when it fits the budget less --l2-reserve (the whole budget without task or
tags) and consolidate.core_max_tokens, else the core entries most relevant to
the task and of most value. L2 is
topic entries plus the core entries L1 could not hold, ranked against the
task (--task TEXT, or --task - to read it from stdin; stdin is never read
otherwise) and --tag labels, best --top-k, packed into the rest of the
budget. An entry that restates one already shown is not shown again.
Archive and pending entries are never injected.

The whole printed block (header, today line, fence, entries, footer) never
exceeds --budget tokens, counted with --tokenizer (o200k, cl100k, or chars:N
for other models), nor --max-chars characters. The block is cut only between
entries; a last line names the core entries left out and why (budget,
top-k, scope); --format json lists every entry left out.
Entries are compact: "[id] content" under a date line that also names the
source when it is not the user's own statement and marks entries older than
--stale-days as old; --meta chooses per-line metadata instead. Output is
deterministic: the same memory, flags and --now give the same bytes (the
today line and the marks need "now": --now, else the clock).

With llm.embedding_model set (or MEMCTL_EMBEDDING_MODEL) and a task, L2 is
also ranked by meaning: the task is embedded with one call to the configured
endpoint (within llm.embedding_timeout) and fused with the entry vectors that
memctl consolidate caches; entries not cached rank by words. Any embedding
failure prints one warning and ranks by words (see docs/INJECT.md).

The text before the fence comes from templates/inject-header.tmpl, which a
memory may override in .memctl/templates/inject-header.tmpl.

Scopes isolate: without --scope only global (unscoped) entries are
eligible; --scope X adds entries scoped X; --scope "X, Y" (comma-separated,
as in add) adds both; --scope all shows everything; --scope project:. is the
git project of the current directory (project:<its full path>, the home
directory as ~: project:~/work/app).
An empty --scope (an unset variable) or a malformed one is an error.
--tag keeps only L2 entries carrying one of the tags.

inject never takes the write lock and never writes to the memory, except
the git-ignored index cache and the opt-in inject log under .memctl/cache
(inject.log = true in config, or MEMCTL_INJECT_LOG=1).`,
		Example: `  memctl inject --budget 2000
  memctl inject --task "fix the slow report API" --budget 4000
  memctl inject --task - --budget 1500 < prompt.txt
  memctl inject --task "$TASK" --json | jq -r .block
  memctl inject --task "$TASK" --meta date,source --max-chars 10000
  memctl inject --task "cache design" --scope project:order-service --now 2026-02-01
  MEMCTL_EMBEDDING_MODEL=nomic-embed-text memctl inject --task "when does the alarm ring"
  memctl inject --write AGENTS.md --scope project:app   # the block between <!-- memctl:begin --> and <!-- memctl:end -->`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Given = givenFlags(cmd)
			return runInject(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Task, "task", "t", "", `task text to retrieve L2 entries for; "-" reads it from stdin`)
	fl.StringArrayVar(&opts.Tags, "tag", nil, "keep only L2 entries with this tag (repeatable); tags also join the query")
	fl.StringVar(&opts.Scope, "scope", "", `scopes to include besides global entries, comma-separated; "all" for every scope`)
	fl.IntVarP(&opts.Budget, "budget", "b", 0, "whole block budget in tokens (default inject.budget, 4000)")
	fl.Float64Var(&opts.L2Reserve, "l2-reserve", -1, "share of the budget kept for L2; the core takes the rest (default inject.l2_reserve, 0.25)")
	fl.IntVar(&opts.CoreMaxLines, "core-max-lines", -1, "physical limit of L1 in lines (default inject.core_max_lines, 200)")
	fl.IntVar(&opts.CoreMaxBytes, "core-max-bytes", -1, "physical limit of L1 in bytes (default inject.core_max_bytes, 25600)")
	fl.IntVarP(&opts.TopK, "top-k", "k", -1, "L2 entries to consider; 0 = as many as the budget allows (default inject.top_k, 8)")
	fl.StringVar(&opts.Tokenizer, "tokenizer", "", "token counter: o200k, cl100k or chars:N (default inject.tokenizer)")
	fl.StringVar(&opts.Ranker, "ranker", "", "L2 ranking: bm25 or bm25-plain (default inject.ranker)")
	fl.StringVar(&opts.Format, "format", "md", "output format: md or json")
	fl.BoolVar(&opts.JSON, "json", false, "same as --format json")
	fl.StringVar(&opts.Meta, "meta", "", "per-entry metadata: compact (date lines), none, full, or fields of date,time,source,age,tags,scope")
	fl.IntVar(&opts.MaxChars, "max-chars", -1, "most characters of the block; 0 = no limit (default inject.max_chars)")
	fl.StringVar(&opts.Now, "now", "", "date or RFC 3339 time of the today line, old marks and expiry (default: the clock)")
	fl.IntVar(&opts.StaleDays, "stale-days", -1, "mark entries older than this many days as old; 0 = never (default inject.stale_days)")
	fl.BoolVar(&opts.NoCache, "no-cache", false, "parse the Markdown files, ignoring and not writing the index cache")
	fl.StringVar(&opts.Write, "write", "", "keep the block between memctl's markers in FILE (AGENTS.md, CLAUDE.md, GEMINI.md) current instead of printing it; stdin is not read")
	return cmd
}

// injectHeapLimit is the Go memory above which a one-shot inject collects
// garbage (see runInject).
const injectHeapLimit = 64 << 20

func runInject(ctx context.Context, f *Factory, opts *injectOptions) error {
	// A one-shot inject allocates a few MB and exits: a collection would
	// cost more than it frees (at 100,000 entries about a fifth of its
	// CPU, most of it page faults of the collector's own structures).
	// It collects only past injectHeapLimit; the settings are restored
	// for callers that run on (tests).
	defer heapLimit(injectHeapLimit, true)()
	if opts.JSON {
		if opts.Given["format"] && opts.Format != "json" {
			return FlagErrorf("--json and --format %s disagree: give one of them", opts.Format)
		}
		opts.Format = "json"
	}
	if opts.Format != "md" && opts.Format != "json" {
		return FlagErrorf("invalid --format %q: want md or json", opts.Format)
	}
	s, err := f.Store(ctx, "inject")
	if err != nil {
		return err
	}
	io, err := injectOptionsFrom(f, s.Config, opts.injectFlags)
	if err != nil {
		return err
	}
	io.Tags = opts.Tags
	if opts.Given["scope"] { // "" (an unset variable) is an error, never "global only"
		if io.Scopes, err = mdmem.SplitScopes(opts.Scope); err != nil {
			return &FlagError{Err: fmt.Errorf("--scope %q: %w", opts.Scope, err)}
		}
	}
	if io.Meta, err = inject.ParseMeta(opts.Meta); err != nil {
		return &FlagError{Err: fmt.Errorf("--meta: %w", err)}
	}
	io.MaxChars = s.Config.Inject.MaxChars
	if opts.Given["max-chars"] {
		if opts.MaxChars < 0 {
			return FlagErrorf("invalid --max-chars %d: want 0 (no limit) or more", opts.MaxChars)
		}
		io.MaxChars = opts.MaxChars
	}
	// A block kept in a file has no date of its own (no today line, no
	// .Today in the header): the file changes only when the memory does.
	headerDay := io.Now
	if opts.Write != "" {
		io.NoTodayLine, headerDay = true, time.Time{}
	}
	if io.Header, io.RulesHeading, err = inject.LoadHeader(s.Dir, headerDay); err != nil {
		return err
	}
	// stdin is read only when asked for: a hook's JSON payload on stdin
	// must never become the task by accident.
	if opts.Task == "-" {
		if f.IO.In == nil {
			return FlagErrorf("--task -: no stdin to read the task from")
		}
		task, total, err := inject.ReadTask(f.IO.In)
		if err != nil {
			return err
		}
		if total > int64(len(task)) && total > inject.MaxTaskBytes {
			fmt.Fprintf(f.IO.ErrOut, "memctl: warning: task text on stdin is %d bytes; only the first %d are used for retrieval\n", total, len(task))
		}
		io.Task = task
	} else {
		io.Task = opts.Task
	}
	corpus, err := inject.LoadCorpusFor(ctx, s.Dir, !opts.NoCache, io.Counter)
	if err != nil {
		return err
	}
	f.warnConflicts(corpus.Conflicts())
	io.Dense = injectDense(ctx, f, s, io.Task)
	res, err := inject.Inject(corpus, io)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: %s\n", w)
	}
	logInject(f, s, res)
	if opts.Write != "" { // the block between memctl's markers in an agent file
		changed, err := inject.WriteBlock(ctx, opts.Write, res.Block)
		if err == nil && changed {
			fmt.Fprintf(f.IO.ErrOut, "memctl: updated the memctl block in %s\n", opts.Write)
		}
		return err
	}
	if opts.Format == "json" {
		return f.printJSON(res.JSON())
	}
	_, err = fmt.Fprint(f.IO.Out, res.Block)
	return err
}

// injectDense is the embedding side of the L2 ranking: with
// llm.embedding_model set, a task, and entry vectors of that model in the
// cache (consolidate fills it), the task's vector from one embedding call
// within llm.embedding_timeout. On any failure it warns and returns nil:
// the block is then ranked by words, and inject still succeeds.
func injectDense(ctx context.Context, f *Factory, s *mdmem.Store, task string) *inject.Dense {
	base, key, model := consolidate.EmbeddingEndpoint(s.Config, f.Getenv)
	text := inject.EmbedText(task)
	if model == "" || text == "" {
		return nil
	}
	warn := func(format string, a ...any) *inject.Dense {
		msg := strings.Join(strings.Fields(fmt.Sprintf(format, a...)), " ") // one line, whatever the endpoint said
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: %s; ranking by words only\n", msg)
		return nil
	}
	vs, err := inject.ReadVectors(s.Dir)
	if err != nil {
		return warn("embedding cache: %v (memctl consolidate rebuilds it)", err)
	}
	if vs.Model != model || vs.Len() == 0 {
		return warn("no entry vectors of %s in %s/%s yet (memctl consolidate embeds the entries)", model, mdmem.CacheDir, inject.VectorCacheFile)
	}
	timeout := s.Config.LLM.EmbeddingTimeout.Duration
	if timeout <= 0 {
		timeout = 2 * time.Second
	}
	ectx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	v, err := consolidate.EmbedOne(ectx, consolidate.NewOpenAIEmbedder(base, key, model), text)
	if err != nil {
		if ectx.Err() != nil && ctx.Err() == nil {
			return warn("embedding the task (%s): no answer within llm.embedding_timeout %s", model, timeout)
		}
		return warn("embedding the task (%s): %v", model, err)
	}
	d, err := inject.NewDense(v, vs)
	if err != nil {
		return warn("embedding the task (%s): %v", model, err)
	}
	return d
}

// injectOptionsFrom merges flags over the [inject] config (and the core
// limit, consolidate.core_max_tokens). Negative flag values (and empty
// strings) mean "not given".
// injectFlags are the budget and ranking flags inject and stats share,
// copied from the command line; a flag counts only when Given.
type injectFlags struct {
	Budget, CoreMaxLines, CoreMaxBytes, TopK, StaleDays int
	L2Reserve                                           float64
	Tokenizer, Ranker, Now                              string
	// Given holds the names of the flags given on the command line.
	Given map[string]bool
}

// givenFlags returns the names of the flags given on c's command line.
func givenFlags(c *cobra.Command) map[string]bool {
	given := map[string]bool{}
	c.Flags().Visit(func(fl *pflag.Flag) { given[fl.Name] = true })
	return given
}

// injectOptionsFrom turns the configuration and the flags given into
// inject's options, refusing out-of-range flag values.
func injectOptionsFrom(f *Factory, cfg *mdmem.Config, fl injectFlags) (inject.Options, error) {
	c := cfg.Inject
	o := inject.Options{Budget: c.Budget, L2Reserve: c.L2Reserve, CoreMaxTokens: cfg.Consolidate.CoreMaxTokens, CoreMaxLines: c.CoreMaxLines, CoreMaxBytes: c.CoreMaxBytes, TopK: c.TopK, StaleDays: c.StaleDays, Ranker: c.Ranker}
	if fl.Given["budget"] {
		if fl.Budget <= 0 {
			return o, FlagErrorf("invalid --budget %d: want a positive number of tokens", fl.Budget)
		}
		o.Budget = fl.Budget
	}
	if fl.Given["l2-reserve"] {
		if fl.L2Reserve < 0 || fl.L2Reserve > 1 {
			return o, FlagErrorf("invalid --l2-reserve %v: want a share in [0,1]", fl.L2Reserve)
		}
		o.L2Reserve = fl.L2Reserve
	}
	for _, v := range []struct {
		name string
		val  int
		dst  *int
	}{{"core-max-lines", fl.CoreMaxLines, &o.CoreMaxLines}, {"core-max-bytes", fl.CoreMaxBytes, &o.CoreMaxBytes}, {"top-k", fl.TopK, &o.TopK}, {"stale-days", fl.StaleDays, &o.StaleDays}} {
		if fl.Given[v.name] {
			if v.val < 0 {
				return o, FlagErrorf("invalid --%s %d: want 0 or more", v.name, v.val)
			}
			*v.dst = v.val
		}
	}
	if fl.Ranker != "" {
		if _, ok := inject.Rankers[fl.Ranker]; !ok {
			return o, FlagErrorf("unknown --ranker %q (known: %s)", fl.Ranker, strings.Join(inject.RankerNames(), ", "))
		}
		o.Ranker = fl.Ranker
	}
	tok := fl.Tokenizer
	if tok == "" {
		tok = c.Tokenizer
	}
	cnt, err := inject.NewCounter(tok)
	if err != nil {
		if fl.Given["tokenizer"] {
			return o, &FlagError{Err: err}
		}
		return o, fmt.Errorf("%s: inject.tokenizer: %w", mdmem.ConfigPath, err)
	}
	o.Counter = cnt
	if fl.Now != "" {
		t, ok := mdmem.ParseTime(fl.Now)
		if !ok {
			return o, FlagErrorf("invalid --now %q: want a date (2026-01-31) or an RFC 3339 time", fl.Now)
		}
		o.Now = t
	} else {
		o.Now = f.Now().UTC()
	}
	return o, nil
}

// loadCorpus opens the memory and loads its entries through the index
// cache, which a rebuild fills with the configured tokenizer's counts.
func loadCorpus(ctx context.Context, f *Factory) (*mdmem.Store, *inject.Corpus, error) {
	s, err := f.Store(ctx)
	if err != nil {
		return nil, nil, err
	}
	c, err := inject.LoadCorpusFor(ctx, s.Dir, true, configCounter(s))
	if err != nil {
		return nil, nil, err
	}
	f.warnConflicts(c.Conflicts())
	return s, c, nil
}

// configCounter is the configured tokenizer, whose token counts a rebuilt
// index cache keeps (nil if the config names none memctl knows).
func configCounter(s *mdmem.Store) inject.Counter {
	cnt, err := inject.NewCounter(s.Config.Inject.Tokenizer)
	if err != nil {
		return nil
	}
	return cnt
}

// logInject appends an inject's record to the opt-in inject log
// (inject.log = true, or MEMCTL_INJECT_LOG=1), for the CLI, the hook and
// the MCP server alike: stats counts every block an agent was given. A
// write that fails is a warning; the block is still given.
func logInject(f *Factory, s *mdmem.Store, res *inject.Result) {
	if res == nil || !s.Config.Inject.Log && f.Getenv("MEMCTL_INJECT_LOG") != "1" {
		return
	}
	ids := make([]string, 0, len(res.Items))
	for _, it := range res.Items {
		ids = append(ids, it.Note.Ref())
	}
	rec := mdmem.UsageRecord{Kind: mdmem.UsageInject, Time: f.Now().UTC(), Budget: res.Budget, Tokens: res.UsedTokens, IDs: ids, Omitted: len(res.LeftOut)}
	if err := mdmem.AppendUsageLog(s.Dir, rec); err != nil {
		fmt.Fprintf(f.IO.ErrOut, "memctl: warning: inject log: %v\n", err)
	}
}
