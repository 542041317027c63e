package consolidate

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/consolidate/fakellm"
	"github.com/memctl/memctl/inject"
	"github.com/memctl/memctl/mdmem"
)

// A labelled consolidation set (see ../shared/data/consolidation-dev):
// base.jsonl (stored entries), candidates.jsonl (new observations) and
// gold.jsonl (what each candidate is to which base line).
type labelledSet struct {
	base, cands []*mdmem.Candidate
	gold        []goldLabel
}

type goldLabel struct {
	Cand       int    `json:"candidate_index"`
	Kind       string `json:"kind"`
	Targets    []int  `json:"targets"`
	Difficulty string `json:"difficulty"`
}

func readJSONL(t testing.TB, path string, fn func(line []byte) error) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		if err := fn(sc.Bytes()); err != nil {
			t.Fatalf("%s:%d: %v", path, n, err)
		}
	}
}

func loadLabelledSet(t testing.TB, dir string) *labelledSet {
	ls := &labelledSet{}
	for _, f := range []struct {
		name string
		dst  *[]*mdmem.Candidate
	}{{"base.jsonl", &ls.base}, {"candidates.jsonl", &ls.cands}} {
		fh, err := os.Open(filepath.Join(dir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		err = mdmem.DecodeJSONLines(fh, 1<<20, func(n int, c *mdmem.Candidate, err error) error {
			if err != nil {
				return fmt.Errorf("%s:%d: %v", f.name, n, err)
			}
			*f.dst = append(*f.dst, c)
			return nil
		})
		fh.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	readJSONL(t, filepath.Join(dir, "gold.jsonl"), func(b []byte) error {
		var g goldLabel
		if err := json.Unmarshal(b, &g); err != nil {
			return err
		}
		if g.Cand < 0 || g.Cand >= len(ls.cands) {
			return fmt.Errorf("candidate_index %d out of range", g.Cand)
		}
		for _, x := range g.Targets {
			if x < 0 || x >= len(ls.base) {
				return fmt.Errorf("target %d out of range", x)
			}
		}
		ls.gold = append(ls.gold, g)
		return nil
	})
	return ls
}

// oracleGold turns the labels into the fake LLM's oracle labels (by text).
func (ls *labelledSet) oracleGold() []fakellm.Gold {
	var out []fakellm.Gold
	for _, g := range ls.gold {
		og := fakellm.Gold{Candidate: mdmem.OneLine(ls.cands[g.Cand].Content), Kind: g.Kind}
		if len(g.Targets) > 0 {
			og.Target = mdmem.OneLine(ls.base[g.Targets[0]].Content)
		}
		out = append(out, og)
	}
	return out
}

// devsetRun is one consolidation of a labelled set: its end state and cost.
type devsetRun struct {
	rep      *Report
	mem      *mdmem.Memory
	baseID   []string // base line → entry id after import
	candID   []string // candidate line → candidate id
	requests []fakellm.Request
	wall     time.Duration
}

var devsetNow = time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)

// runLabelledSet builds a fresh memory from the base (memctl import),
// queues the candidates (memctl add --json), and consolidates with the
// oracle LLM (oracle) or rules only.
func runLabelledSet(t testing.TB, ls *labelledSet, oracle bool, config string) *devsetRun {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	s, _, err := mdmem.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if config != "" {
		if err := os.WriteFile(filepath.Join(dir, mdmem.ConfigPath), []byte(config), 0o644); err != nil {
			t.Fatal(err)
		}
		git(t, dir, "add", mdmem.ConfigPath)
		git(t, dir, "commit", "-q", "-m", "config")
		if s, err = mdmem.Open(ctx, dir); err != nil {
			t.Fatal(err)
		}
	}
	s.Now = func() time.Time { return devsetNow }
	norm := func(cs []*mdmem.Candidate) []*mdmem.Candidate {
		var out []*mdmem.Candidate
		for i, c := range cs {
			cc := *c
			if err := cc.Normalize(devsetNow, 1<<20, nil); err != nil {
				t.Fatalf("line %d: %v", i+1, err)
			}
			// As memctl add at a terminal records them.
			if os.Getenv("MEMCTL_CONSOLIDATION_SEEN") == "typed" && mdmem.PersonSource(cc.Source) {
				cc.Seen = mdmem.SeenTyped
			}
			out = append(out, &cc)
		}
		return out
	}
	if _, err := s.Import(ctx, norm(ls.base)); err != nil {
		t.Fatal(err)
	}
	m, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	r := &devsetRun{}
	byText := map[string]string{}
	for _, e := range m.Entries() {
		byText[e.Content] = e.ID
	}
	for i, b := range ls.base {
		id := byText[mdmem.OneLine(b.Content)]
		if id == "" {
			t.Fatalf("base line %d not imported", i)
		}
		r.baseID = append(r.baseID, id)
	}
	if r.candID, err = mdmem.Enqueue(ctx, dir, norm(ls.cands), devsetNow); err != nil {
		t.Fatal(err)
	}
	o := Options{Now: func() time.Time { return devsetNow }, NoLLM: !oracle, Log: func(string, ...any) {}}
	var srv *fakellm.Server
	if oracle {
		// MEMCTL_CONSOLIDATION_LATENCY ("200ms"): each answer waits as
		// long, as a real endpoint's do (llm.parallel then matters).
		srv = fakellm.New([]fakellm.Step{{Auto: "oracle", Gold: ls.oracleGold(), Repeat: true, Delay: os.Getenv("MEMCTL_CONSOLIDATION_LATENCY")}})
		defer srv.Close()
		o.Completer = NewOpenAI(srv.URL+"/v1", "k", "oracle")
	}
	t0 := time.Now()
	if r.rep, err = Run(ctx, open(t, dir), withInject(o)); err != nil {
		t.Fatal(err)
	}
	r.wall = time.Since(t0)
	if srv != nil {
		r.requests = srv.Requests()
	}
	if r.mem, err = mdmem.Load(ctx, dir); err != nil {
		t.Fatal(err)
	}
	return r
}

// outcome of one labelled candidate: "ok" (the correct end state),
// "pending" (waits for a person), "merged-away" (an update folded into
// its stale target: the newer value lost), "held" or "wrong".
func (r *devsetRun) outcome(ls *labelledSet, g goldLabel) string {
	cid := r.candID[g.Cand]
	text := mdmem.OneLine(ls.cands[g.Cand].Content)
	var holder []*mdmem.Entry // entries that carry the candidate
	for _, e := range r.mem.Entries() {
		if e.Content == text || containsStr(e.Refs, cid) {
			holder = append(holder, e)
		}
	}
	for _, h := range r.rep.Plan.Held {
		if h.Candidate == cid {
			return "held"
		}
	}
	liveNew := func() (*mdmem.Entry, bool) {
		for _, e := range holder {
			if e.Content == text && (e.Place == mdmem.PlaceCore || e.Place == mdmem.PlaceTopic) {
				return e, true
			}
		}
		return nil, false
	}
	pending := false
	for _, e := range holder {
		pending = pending || e.Place == mdmem.PlacePending
	}
	var target *mdmem.Entry
	if len(g.Targets) > 0 {
		target = r.mem.Find(r.baseID[g.Targets[0]])
	}
	switch g.Kind {
	case "update":
		if ne, ok := liveNew(); ok && target != nil && target.Place == mdmem.PlaceArchive && target.SupersededBy == ne.ID {
			return "ok"
		}
		if target != nil && live(target.Place) && containsStr(target.Refs, cid) && target.Content != text {
			return "merged-away"
		}
	case "duplicate":
		if target != nil && live(target.Place) && target.Place != mdmem.PlacePending && containsStr(target.Refs, cid) {
			if _, second := liveNew(); !second || target.Content == text {
				return "ok"
			}
		}
	case "compatible":
		if _, ok := liveNew(); ok && target != nil && (target.Place == mdmem.PlaceCore || target.Place == mdmem.PlaceTopic) {
			return "ok"
		}
	case "new":
		if _, ok := liveNew(); ok {
			return "ok"
		}
	}
	if pending {
		return "pending"
	}
	return "wrong"
}

func containsStr(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// exposed reports, per gold label with a target, whether candidate and
// target were in one request.
func (r *devsetRun) exposed(ls *labelledSet, g goldLabel) bool {
	if len(g.Targets) == 0 {
		return false
	}
	ct, tt := mdmem.OneLine(ls.cands[g.Cand].Content), mdmem.OneLine(ls.base[g.Targets[0]].Content)
	for _, rq := range r.requests {
		var c, e bool
		for _, it := range rq.Items {
			c = c || it.Kind == "candidate" && it.Text == ct
			e = e || it.Kind != "candidate" && it.Text == tt
		}
		if c && e {
			return true
		}
	}
	return false
}

// sent reports whether the candidate was in any request.
func (r *devsetRun) sent(ls *labelledSet, g goldLabel) bool {
	ct := mdmem.OneLine(ls.cands[g.Cand].Content)
	for _, rq := range r.requests {
		for _, it := range rq.Items {
			if it.Kind == "candidate" && it.Text == ct {
				return true
			}
		}
	}
	return false
}

// TestLabelledSet scores consolidation on a labelled set: exposure recall
// per kind (the gold target shown to the model with its candidate), end
// state per kind with the oracle LLM and with rules only, and the cost.
// Run with MEMCTL_CONSOLIDATION_SET=<dir> go test ./consolidate/ -run
// TestLabelledSet -v (MEMCTL_CONSOLIDATION_CONFIG: settings;
// MEMCTL_CONSOLIDATION_LATENCY: the fake's delay per answer;
// MEMCTL_CONSOLIDATION_SEEN=typed: the set's user_explicit lines are the
// person's typed words, not an agent's claims, in the import and the
// queue); see BENCHMARKS.md.
func TestLabelledSet(t *testing.T) {
	dir := os.Getenv("MEMCTL_CONSOLIDATION_SET")
	if dir == "" {
		t.Skip("set MEMCTL_CONSOLIDATION_SET to a labelled set (base.jsonl, candidates.jsonl, gold.jsonl)")
	}
	ls := loadLabelledSet(t, dir)
	config := os.Getenv("MEMCTL_CONSOLIDATION_CONFIG")
	llm := runLabelledSet(t, ls, true, config)
	rules := runLabelledSet(t, ls, false, config)
	kinds := []string{"update", "duplicate", "compatible", "new"}
	type row struct{ n, sent, exposed, covered int }
	rows := map[string]*row{}
	ends := map[string]map[string]map[string]int{"llm": {}, "rules": {}}
	byDiff := map[string]*row{}
	numOnly, numOnlyOK := 0, 0
	for _, g := range ls.gold {
		if rows[g.Kind] == nil {
			rows[g.Kind] = &row{}
			ends["llm"][g.Kind], ends["rules"][g.Kind] = map[string]int{}, map[string]int{}
		}
		rw := rows[g.Kind]
		rw.n++
		if llm.sent(ls, g) {
			rw.sent++
		}
		if llm.exposed(ls, g) {
			rw.exposed++
			rw.covered++
		} else if !llm.sent(ls, g) && llm.outcome(ls, g) == "ok" {
			rw.covered++ // settled right by rule (an exact duplicate): no judge needed
		}
		if g.Kind == "update" || g.Kind == "duplicate" {
			k := g.Kind + "/" + g.Difficulty
			if byDiff[k] == nil {
				byDiff[k] = &row{}
			}
			byDiff[k].n++
			if llm.exposed(ls, g) {
				byDiff[k].exposed++
			}
		}
		if g.Kind == "update" {
			if numberSkeleton(ls.cands[g.Cand].Content) == numberSkeleton(ls.base[g.Targets[0]].Content) {
				numOnly++
				if rules.outcome(ls, g) == "ok" {
					numOnlyOK++
				}
			}
		}
		ends["llm"][g.Kind][llm.outcome(ls, g)]++
		ends["rules"][g.Kind][rules.outcome(ls, g)]++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n| kind | sent to LLM | exposure recall | exposed or settled right by rule | end state, oracle LLM | end state, `--no-llm` |\n|---|---|---|---|---|---|\n")
	end := func(m map[string]int, n int) string {
		s := fmt.Sprintf("%d/%d", m["ok"], n)
		var rest []string
		for _, k := range []string{"pending", "merged-away", "held", "wrong"} {
			if m[k] > 0 {
				rest = append(rest, fmt.Sprintf("%d %s", m[k], k))
			}
		}
		if len(rest) > 0 {
			s += " (" + strings.Join(rest, ", ") + ")"
		}
		return s
	}
	for _, k := range kinds {
		rw := rows[k]
		if rw == nil {
			continue
		}
		exp, cov := "–", "–"
		if k != "new" {
			exp = fmt.Sprintf("%d/%d (%.0f%%)", rw.exposed, rw.n, 100*float64(rw.exposed)/float64(rw.n))
			cov = fmt.Sprintf("%d/%d (%.0f%%)", rw.covered, rw.n, 100*float64(rw.covered)/float64(rw.n))
		}
		fmt.Fprintf(&b, "| %s (%d) | %d/%d | %s | %s | %s | %s |\n", k, rw.n, rw.sent, rw.n, exp, cov, end(ends["llm"][k], rw.n), end(ends["rules"][k], rw.n))
	}
	var dk []string
	for k := range byDiff {
		dk = append(dk, k)
	}
	sort.Strings(dk)
	fmt.Fprintf(&b, "\nexposure by difficulty:")
	for _, k := range dk {
		fmt.Fprintf(&b, " %s %d/%d;", k, byDiff[k].exposed, byDiff[k].n)
	}
	u := llm.rep.LLM
	per20 := func(x int) float64 { return float64(x) * 20 / float64(len(ls.cands)) }
	fmt.Fprintf(&b, "\nnumber-only updates (same words, other numbers) right without an LLM: %d/%d", numOnlyOK, numOnly)
	fmt.Fprintf(&b, "\n\nLLM run: %d calls, %d prompt tokens (%.2f calls and %.0f prompt tokens per 20 candidates), %d completion tokens, wall %v (LLM stage %.2fs); summary: %s\n",
		u.Calls, u.PromptTokens, per20(u.Calls), per20(u.PromptTokens), u.CompletionTokens, llm.wall.Round(time.Millisecond), llm.rep.LLMSeconds, llm.rep.Summary)
	if cnt, err := inject.NewCounter("o200k"); err == nil {
		n, largest := 0, 0
		for _, rq := range llm.requests {
			k := cnt.Count(rq.System) + cnt.Count(rq.User)
			n += k
			largest = max(largest, k)
		}
		fmt.Fprintf(&b, "the same requests in o200k tokens (GPT-4o and later): %d (%.0f per 20 candidates), the largest %d\n", n, per20(n), largest)
	}
	fmt.Fprintf(&b, "rules run: wall %v; summary: %s\n", rules.wall.Round(time.Millisecond), rules.rep.Summary)
	t.Log(b.String())
	if os.Getenv("MEMCTL_CONSOLIDATION_VERBOSE") != "" {
		for _, h := range llm.rep.Plan.Held {
			fmt.Printf("held %s: %s\n", h.Candidate, h.Reason)
		}
		for _, g := range ls.gold {
			if g.Kind == "new" {
				continue
			}
			fmt.Printf("%-10s %-6s exposed=%-5v llm=%-11s rules=%-11s %q -> %q\n", g.Kind, g.Difficulty, llm.exposed(ls, g), llm.outcome(ls, g), rules.outcome(ls, g),
				ls.cands[g.Cand].Content, ls.base[g.Targets[0]].Content)
		}
	}
}

// numberSkeleton is a text's tokens with every token holding a digit
// replaced by one mark: two texts with the same skeleton differ in
// numbers only.
func numberSkeleton(s string) string {
	toks := tokens(s)
	for i, t := range toks {
		if hasDigit(t) {
			toks[i] = "#"
		}
	}
	return strings.Join(toks, " ")
}
