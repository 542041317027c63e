package inject

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// EvalQuery is one line of a case's queries.jsonl.
type EvalQuery struct {
	ID       string   `json:"id"`
	Task     string   `json:"task"`
	Evidence []string `json:"evidence"`
	Category string   `json:"category"`
	Tags     []string `json:"tags,omitempty"`
	Scope    string   `json:"scope,omitempty"`
}

// EvalCase is one folder of a regression set.
type EvalCase struct {
	Name     string
	Memories []*mdmem.Candidate
	Queries  []EvalQuery
}

// LoadEvalSet reads a regression set: dir holds case folders (each with
// memories.jsonl and queries.jsonl), or is itself one case.
func LoadEvalSet(dir string) ([]*EvalCase, error) {
	if isCase(dir) {
		c, err := loadCase(dir)
		if err != nil {
			return nil, err
		}
		return []*EvalCase{c}, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var cases []*EvalCase
	for _, de := range ents {
		p := filepath.Join(dir, de.Name())
		if de.IsDir() && isCase(p) {
			c, err := loadCase(p)
			if err != nil {
				return nil, err
			}
			cases = append(cases, c)
		}
	}
	if len(cases) == 0 {
		return nil, fmt.Errorf("%s: no cases (want folders holding memories.jsonl and queries.jsonl)", dir)
	}
	return cases, nil
}

func isCase(dir string) bool {
	_, err1 := os.Stat(filepath.Join(dir, "memories.jsonl"))
	_, err2 := os.Stat(filepath.Join(dir, "queries.jsonl"))
	return err1 == nil && err2 == nil
}

func loadCase(dir string) (*EvalCase, error) {
	c := &EvalCase{Name: filepath.Base(dir)}
	f, err := os.Open(filepath.Join(dir, "memories.jsonl"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	err = mdmem.DecodeJSONLines(f, 1<<20, func(line int, cand *mdmem.Candidate, err error) error {
		if err != nil {
			return fmt.Errorf("%s/memories.jsonl:%d: %v", c.Name, line, err)
		}
		c.Memories = append(c.Memories, cand)
		return nil
	})
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, "queries.jsonl"))
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var q EvalQuery
		if err := json.Unmarshal(line, &q); err != nil {
			return nil, fmt.Errorf("%s/queries.jsonl:%d: %v", c.Name, n, err)
		}
		if q.Category == "" {
			q.Category = "uncategorised"
		}
		c.Queries = append(c.Queries, q)
	}
	return c, sc.Err()
}

// importMemory creates a fresh memory in dir and imports the candidates
// through the product's write path (mdmem.Init, Store.Import: one commit),
// so eval measures the layout and ids memctl import gives.
func importMemory(ctx context.Context, dir string, cands []*mdmem.Candidate, now time.Time) error {
	s, _, err := mdmem.Init(ctx, dir)
	if err != nil {
		return err
	}
	s.Now = func() time.Time { return now }
	// The eval sets are memories as stated: none waits for a person.
	s.Config.Consolidate.HoldAgentCore = false
	norm := make([]*mdmem.Candidate, 0, len(cands))
	for i, c := range cands {
		cc := *c
		if err := cc.Normalize(now, 1<<20, nil); err != nil {
			return fmt.Errorf("memory %d: %v", i+1, err)
		}
		norm = append(norm, &cc)
	}
	_, err = s.Import(ctx, norm)
	return err
}

// EvalOptions choose the cuts of an eval run.
type EvalOptions struct {
	Budgets     []int    // budget cuts (top-K 0: as many as fit)
	TopKs       []int    // top-K cuts (budget EvalBigBudget: only K limits)
	Rankers     []string // rankings to compare, side by side
	Counter     Counter
	ContentOnly bool      // count only entry text against the budget (the reference's accounting)
	Now         time.Time // fixed "now" of the blocks; zero: the day after each case's newest memory
	Base        Options   // L2 reserve, core limits, stale days
	// Embed, when set, adds a "<ranker>+dense" row per ranker: the same
	// ranking fused with embeddings (every note and task embedded once
	// per case, the vectors kept in the case's vector cache).
	Embed func(ctx context.Context, texts []string) ([][]float32, error)
}

// DenseSuffix marks the eval rows of a ranker fused with embeddings.
const DenseSuffix = "+dense"

// caseDense embeds a case's notes into its vector cache and its tasks,
// in batches; it returns the cache and the task vectors by task.
func caseDense(ctx context.Context, dir string, c *Corpus, queries []EvalQuery, embed func(context.Context, []string) ([][]float32, error)) (*Vectors, map[string][]float32, error) {
	all := func(texts []string) (map[string][]float32, error) {
		out := map[string][]float32{}
		for i := 0; i < len(texts); i += 64 {
			part := texts[i:min(i+64, len(texts))]
			vs, err := embed(ctx, part)
			if err != nil {
				return nil, err
			}
			if len(vs) != len(part) {
				return nil, fmt.Errorf("%d vectors for %d texts", len(vs), len(part))
			}
			for j, v := range vs {
				out[part[j]] = v
			}
		}
		return out, nil
	}
	var notes, tasks []string
	for i := range c.Len() {
		notes = append(notes, c.Note(i).Content)
	}
	for _, q := range queries {
		tasks = append(tasks, EmbedText(q.Task))
	}
	nv, err := all(notes)
	if err != nil {
		return nil, nil, fmt.Errorf("embedding notes: %w", err)
	}
	if err := WriteVectors(ctx, dir, "eval", nv); err != nil {
		return nil, nil, err
	}
	vs, err := ReadVectors(dir)
	if err != nil {
		return nil, nil, err
	}
	tv, err := all(tasks)
	if err != nil {
		return nil, nil, fmt.Errorf("embedding tasks: %w", err)
	}
	return vs, tv, nil
}

// EvalBigBudget is the budget of top-K cuts: large enough that only K limits.
const EvalBigBudget = 1 << 30

// CutResult is one ranker at one cut.
type CutResult struct {
	Ranker     string             `json:"ranker"`
	Cut        string             `json:"cut"` // "top-5", "budget-250"
	Queries    int                `json:"queries"`
	Recall     float64            `json:"recall"` // a fraction, 0-1
	ByCategory map[string]float64 `json:"by_category"`
	CatCounts  map[string]int     `json:"category_queries"`
	AvgTokens  float64            `json:"avg_tokens"`
	AvgEntries float64            `json:"avg_entries"`
	AvgFrame   float64            `json:"avg_frame_tokens"` // header, today line, fence, headings, footer (block accounting)
	LineOver   float64            `json:"line_overhead"`    // per entry: tokens of its line beyond the content's
	Overhead   float64            `json:"entry_overhead"`   // per entry: line and date line tokens beyond the content's
	P50ms      float64            `json:"p50_ms"`
	P95ms      float64            `json:"p95_ms"`
}

// EvalReport is a whole run.
type EvalReport struct {
	Set        string      `json:"set"`
	Cases      int         `json:"cases"`
	Memories   int         `json:"memories"`
	Queries    int         `json:"queries"`
	Tokenizer  string      `json:"tokenizer"`
	Accounting string      `json:"accounting"` // "block" or "content"
	Results    []CutResult `json:"results"`
}

// Eval replays a regression set: per case a fresh temporary memory, then
// an inject per query, ranker and cut. Recall of a query is the share of
// its evidence found in the refs of the injected entries (1.0 without
// evidence).
func Eval(ctx context.Context, set string, cases []*EvalCase, o EvalOptions) (*EvalReport, error) {
	if len(o.Rankers) == 0 {
		o.Rankers = []string{DefaultRanker}
	}
	rep := &EvalReport{Set: set, Cases: len(cases), Tokenizer: o.Counter.Name(), Accounting: "block"}
	if o.ContentOnly {
		rep.Accounting = "content"
	}
	cuts := evalCuts(o)
	rankers, err := evalRankers(o)
	if err != nil {
		return nil, err
	}
	o.Rankers = rankers
	accs := map[[2]int]*evalAcc{}
	for ri := range o.Rankers {
		for ci := range cuts {
			accs[[2]int{ri, ci}] = &evalAcc{cat: map[string]float64{}, catN: map[string]int{}}
		}
	}
	tmp, err := os.MkdirTemp("", "memctl-eval-*")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	for n, c := range cases {
		rep.Memories += len(c.Memories)
		rep.Queries += len(c.Queries)
		if err := evalCase(ctx, filepath.Join(tmp, fmt.Sprintf("case-%03d", n)), c, o, cuts, accs); err != nil {
			return nil, err
		}
	}
	for ri, rname := range o.Rankers {
		for ci, ct := range cuts {
			rep.Results = append(rep.Results, accs[[2]int{ri, ci}].result(rname, ct.name))
		}
	}
	return rep, nil
}

// evalCut is one cut of an eval run: a budget, or a top-K.
type evalCut struct {
	name      string
	budget, k int
}

// evalCuts returns the run's cuts: the top-K cuts, then the budget cuts.
func evalCuts(o EvalOptions) []evalCut {
	var cuts []evalCut
	for _, k := range o.TopKs {
		cuts = append(cuts, evalCut{fmt.Sprintf("top-%d", k), EvalBigBudget, k})
	}
	for _, b := range o.Budgets {
		cuts = append(cuts, evalCut{fmt.Sprintf("budget-%d", b), b, 0})
	}
	return cuts
}

// evalRankers checks the run's rankers and returns them, followed by
// their "+dense" rows when the run embeds.
func evalRankers(o EvalOptions) ([]string, error) {
	for _, r := range o.Rankers {
		if _, ok := Rankers[r]; !ok {
			return nil, fmt.Errorf("unknown ranker %q (known: %s)", r, strings.Join(RankerNames(), ", "))
		}
	}
	if o.Embed != nil {
		for _, r := range o.Rankers {
			o.Rankers = append(o.Rankers, r+DenseSuffix)
		}
	}
	return o.Rankers, nil
}

// evalAcc sums the figures of one ranker at one cut over the queries.
type evalAcc struct {
	sum, tokens, entries float64
	frame, overhead      float64
	lineOver             float64
	n                    int
	cat                  map[string]float64
	catN                 map[string]int
	lat                  []time.Duration
}

// evalCase imports case c into dir and runs its queries through every
// ranker and cut, adding to accs.
func evalCase(ctx context.Context, dir string, c *EvalCase, o EvalOptions, cuts []evalCut, accs map[[2]int]*evalAcc) error {
	now := o.Now
	if now.IsZero() {
		now = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	if err := importMemory(ctx, dir, c.Memories, now); err != nil {
		return fmt.Errorf("case %s: %w", c.Name, err)
	}
	corpus, err := LoadCorpus(ctx, dir, false)
	if err != nil {
		return fmt.Errorf("case %s: %w", c.Name, err)
	}
	blockNow := caseBlockNow(c, o.Now)
	var vecs *Vectors
	var taskVecs map[string][]float32
	if o.Embed != nil {
		if vecs, taskVecs, err = caseDense(ctx, dir, corpus, c.Queries, o.Embed); err != nil {
			return fmt.Errorf("case %s: %w", c.Name, err)
		}
	}
	for ri, rname := range o.Rankers {
		rname, dense := strings.CutSuffix(rname, DenseSuffix)
		for ci, ct := range cuts {
			a := accs[[2]int{ri, ci}]
			for _, q := range c.Queries {
				if err := ctx.Err(); err != nil {
					return err
				}
				opt := o.Base
				opt.Task, opt.Tags, opt.Scopes = q.Task, q.Tags, nil
				if q.Scope != "" {
					if opt.Scopes, err = mdmem.SplitScopes(q.Scope); err != nil {
						return fmt.Errorf("query %s: %w", q.ID, err)
					}
				}
				opt.Budget, opt.TopK, opt.Ranker = ct.budget, ct.k, rname
				opt.Counter, opt.Now, opt.contentOnly = o.Counter, blockNow, o.ContentOnly
				if dense {
					// A task vector with no direction ranks by words,
					// as inject does.
					opt.Dense, _ = NewDense(taskVecs[EmbedText(q.Task)], vecs)
				}
				if err := a.query(corpus, opt, q, o); err != nil {
					return fmt.Errorf("case %s query %s: %w", c.Name, q.ID, err)
				}
			}
		}
	}
	return nil
}

// caseBlockNow is the "now" of a case's blocks: now if set, else the day
// after the case's newest memory (a session that follows its last one).
func caseBlockNow(c *EvalCase, now time.Time) time.Time {
	if !now.IsZero() {
		return now
	}
	for _, m := range c.Memories {
		now = maxTime(now, m.CreatedAt, m.UpdatedAt)
	}
	if !now.IsZero() {
		now = now.AddDate(0, 0, 1)
	}
	return now
}

// query runs one inject, timed, and adds its recall, tokens and
// overheads.
func (a *evalAcc) query(corpus *Corpus, opt Options, q EvalQuery, o EvalOptions) error {
	t0 := time.Now()
	res, err := Inject(corpus, opt)
	a.lat = append(a.lat, time.Since(t0))
	if err != nil {
		return err
	}
	r := queryRecall(q.Evidence, res.Items)
	a.sum += r
	a.n++
	a.cat[q.Category] += r
	a.catN[q.Category]++
	a.tokens += float64(res.UsedTokens)
	a.entries += float64(len(res.Items))
	if !o.ContentOnly {
		a.frame += float64(res.FrameTokens)
		content := 0
		for _, it := range res.Items {
			k := o.Counter.Count(cleanText(it.Note.Content))
			content += k
			a.lineOver += float64(it.Tokens - k)
		}
		a.overhead += float64(res.UsedTokens - res.FrameTokens - content)
	}
	return nil
}

// result averages the sums into the report's row for ranker rname at
// cut.
func (a *evalAcc) result(rname, cut string) CutResult {
	cr := CutResult{Ranker: rname, Cut: cut, Queries: a.n, ByCategory: map[string]float64{}, CatCounts: a.catN}
	if a.n > 0 {
		cr.Recall = a.sum / float64(a.n)
		cr.AvgTokens = a.tokens / float64(a.n)
		cr.AvgEntries = a.entries / float64(a.n)
		cr.AvgFrame = a.frame / float64(a.n)
		if a.entries > 0 {
			cr.Overhead = a.overhead / a.entries
			cr.LineOver = a.lineOver / a.entries
		}
	}
	for k, v := range a.cat {
		cr.ByCategory[k] = v / float64(a.catN[k])
	}
	cr.P50ms, cr.P95ms = percentileMS(a.lat, 0.50), percentileMS(a.lat, 0.95)
	return cr
}

func queryRecall(evidence []string, items []Item) float64 {
	if len(evidence) == 0 {
		return 1
	}
	have := map[string]bool{}
	for _, it := range items {
		for _, r := range it.Note.Refs {
			have[r] = true
		}
	}
	found := 0
	for _, e := range evidence {
		if have[e] {
			found++
		}
	}
	return float64(found) / float64(len(evidence))
}

func percentileMS(d []time.Duration, p float64) float64 {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(p*float64(len(s)-1) + 0.5)
	return float64(s[i].Microseconds()) / 1000
}

// Categories returns the categories of a report's results, sorted.
func (r *EvalReport) Categories() []string {
	set := map[string]bool{}
	for _, cr := range r.Results {
		for k := range cr.ByCategory {
			set[k] = true
		}
	}
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// WriteText prints the report as a table.
func (r *EvalReport) WriteText(w *strings.Builder) {
	fmt.Fprintf(w, "set %s: %d cases, %d memories, %d queries; tokenizer %s, %s accounting\n\n", r.Set, r.Cases, r.Memories, r.Queries, r.Tokenizer, r.Accounting)
	cats := r.Categories()
	fmt.Fprintf(w, "%-12s %-12s %7s", "ranker", "cut", "recall")
	for _, c := range cats {
		fmt.Fprintf(w, " %12s", trunc(c, 12))
	}
	fmt.Fprintf(w, " %8s %8s %8s %8s", "tokens", "entries", "p50 ms", "p95 ms")
	if r.Accounting == "block" {
		fmt.Fprintf(w, " %6s %9s %9s", "frame", "line ovh", "entry ovh")
	}
	fmt.Fprintln(w)
	for _, cr := range r.Results {
		fmt.Fprintf(w, "%-12s %-12s %7.1f", cr.Ranker, cr.Cut, 100*cr.Recall)
		for _, c := range cats {
			fmt.Fprintf(w, " %12.1f", 100*cr.ByCategory[c])
		}
		fmt.Fprintf(w, " %8.0f %8.1f %8.2f %8.2f", cr.AvgTokens, cr.AvgEntries, cr.P50ms, cr.P95ms)
		if r.Accounting == "block" {
			fmt.Fprintf(w, " %6.1f %9.1f %9.1f", cr.AvgFrame, cr.LineOver, cr.Overhead)
		}
		fmt.Fprintln(w)
	}
}

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

func maxTime(a time.Time, ts ...time.Time) time.Time {
	for _, t := range ts {
		if t.After(a) {
			a = t
		}
	}
	return a
}
