package cmd

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/memctl/memctl/consolidate"
	"github.com/memctl/memctl/inject"
	"github.com/memctl/memctl/mdmem"
	"github.com/spf13/cobra"
)

func init() { register(newEvalCmd) }

type evalOptions struct {
	Budgets   string
	TopKs     string
	Rankers   string
	Tokenizer string
	Account   string
	Embedding string
	JSON      bool
}

func newEvalCmd(f *Factory) *cobra.Command {
	opts := &evalOptions{}
	cmd := &cobra.Command{
		Use:   "eval SET",
		Short: "Replay a regression set and report retrieval recall",
		Long: `Replay a regression set and report how much of the known-relevant memory
inject finds. SET is a folder of cases, or one case: a case folder holds
memories.jsonl (the import schema) and queries.jsonl, one query a line:
{"id", "task", "evidence": [refs], "category"}.

For every case eval builds a fresh temporary memory (outside the current
memory, which it never touches), then injects for every query at each cut:
--top-k cuts use an unlimited budget so only K limits; --budget cuts use
top-K 0 (as many entries as fit). Recall of a query is the share of its
evidence found among the refs of the injected entries (a query without
evidence counts 1.0); eval reports it overall and per category, with the
tokens used and the inject latency (p50, p95), for each --ranker side by
side.

--accounting block counts the whole printed block against the budget, as
inject does; --accounting content counts only the entries' text, the way
published retrieval figures are usually measured (use it with
--tokenizer chars:4 to compare with "characters / 4" figures).

--embedding-model NAME adds a "<ranker>+dense" row per ranker: the same
ranking fused with embeddings, as inject does with llm.embedding_model
(docs/INJECT.md, "Dense retrieval"). Every memory and task of the set is
embedded through the endpoint OPENAI_BASE_URL names (key OPENAI_API_KEY),
64 texts a call; latency figures leave the calls out.`,
		Example: `  memctl eval testdata/eval
  memctl eval ../shared/data/locomo-dev --budget 250,500,1000 --top-k 5,10,25
  memctl eval ../shared/data/locomo-dev --ranker bm25,bm25-plain --accounting content --tokenizer chars:4 --json
  OPENAI_BASE_URL=http://localhost:11434/v1 memctl eval ../shared/data/locomo-dev --embedding-model nomic-embed-text`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runEval(cmd.Context(), f, args[0], opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Budgets, "budget", "250,500,1000", "budget cuts in tokens, comma-separated (\"\" for none)")
	fl.StringVar(&opts.TopKs, "top-k", "5,10,25", "top-K cuts, comma-separated (\"\" for none)")
	fl.StringVar(&opts.Rankers, "ranker", "bm25,bm25-plain", "rankers to compare, comma-separated")
	fl.StringVar(&opts.Tokenizer, "tokenizer", "o200k", "token counter: o200k, cl100k or chars:N")
	fl.StringVar(&opts.Account, "accounting", "block", "what the budget counts: block (the printed block) or content (entry text only)")
	fl.StringVar(&opts.Embedding, "embedding-model", "", "also rank fused with this embedding model's vectors (endpoint: OPENAI_BASE_URL)")
	fl.BoolVar(&opts.JSON, "json", false, "print JSON")
	return cmd
}

func parseInts(flag, s string, min int) ([]int, error) {
	var out []int
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < min {
			return nil, FlagErrorf("invalid --%s value %q: want integers of at least %d, comma-separated", flag, p, min)
		}
		out = append(out, n)
	}
	return out, nil
}

func runEval(ctx context.Context, f *Factory, set string, opts *evalOptions) error {
	budgets, err := parseInts("budget", opts.Budgets, 1)
	if err != nil {
		return err
	}
	topKs, err := parseInts("top-k", opts.TopKs, 1)
	if err != nil {
		return err
	}
	if len(budgets)+len(topKs) == 0 {
		return FlagErrorf("no cuts: give --budget or --top-k")
	}
	if opts.Account != "block" && opts.Account != "content" {
		return FlagErrorf("invalid --accounting %q: want block or content", opts.Account)
	}
	var rankers []string
	for _, r := range strings.Split(opts.Rankers, ",") {
		if r = strings.TrimSpace(r); r == "" {
			continue
		}
		if _, ok := inject.Rankers[r]; !ok {
			return FlagErrorf("unknown --ranker %q (known: %s)", r, strings.Join(inject.RankerNames(), ", "))
		}
		rankers = append(rankers, r)
	}
	cnt, err := inject.NewCounter(opts.Tokenizer)
	if err != nil {
		return &FlagError{Err: err}
	}
	cases, err := inject.LoadEvalSet(set)
	if err != nil {
		return err
	}
	def := mdmem.DefaultConfig()
	var embed func(context.Context, []string) ([][]float32, error)
	if opts.Embedding != "" {
		base, key, _ := consolidate.EmbeddingEndpoint(def, f.Getenv)
		emb := consolidate.NewOpenAIEmbedder(base, key, opts.Embedding)
		embed = func(ctx context.Context, texts []string) ([][]float32, error) {
			ctx, cancel := context.WithTimeout(ctx, def.LLM.Timeout.Duration)
			defer cancel()
			return emb.Embed(ctx, texts)
		}
	}
	rep, err := inject.Eval(ctx, set, cases, inject.EvalOptions{
		Embed:   embed,
		Budgets: budgets, TopKs: topKs, Rankers: rankers, Counter: cnt, ContentOnly: opts.Account == "content",
		Base: inject.Options{L2Reserve: def.Inject.L2Reserve, CoreMaxTokens: def.Consolidate.CoreMaxTokens, CoreMaxLines: def.Inject.CoreMaxLines,
			CoreMaxBytes: def.Inject.CoreMaxBytes, StaleDays: def.Inject.StaleDays},
	})
	if err != nil {
		return err
	}
	if opts.JSON {
		return f.printJSON(rep)
	}
	var b strings.Builder
	rep.WriteText(&b)
	_, err = fmt.Fprint(f.IO.Out, b.String())
	return err
}
