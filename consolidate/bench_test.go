package consolidate

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/memctl/memctl/consolidate/fakellm"
	"github.com/memctl/memctl/mdmem"
	"github.com/memctl/memctl/templates"
)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// bigMemory returns MEMORY.md and topic files holding n entries, and the
// texts of the topic entries.
func bigMemory(rng *rand.Rand, n int) (map[string][]byte, []string) {
	sentence := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = word(rng.IntN(20000))
		}
		return strings.Join(w, " ")
	}
	var core strings.Builder
	core.WriteString("# Core profile\n\n")
	id := map[string]int{}
	next := func(p string) string { id[p]++; return mdmem.FormatID(p, id[p]) }
	for _, sec := range []struct{ h, p string }{{"User preferences", "pref"}, {"Project constraints", "cons"}, {"Key decisions", "dec"}} {
		fmt.Fprintf(&core, "## %s\n", sec.h)
		for i := 0; i < 40; i++ {
			fmt.Fprintf(&core, "- [%s] %s (user · 2025-%02d-%02d)\n", next(sec.p), sentence(9), 1+i%12, 1+i%28)
		}
		core.WriteString("\n")
	}
	core.WriteString("## Pending confirmation\n\n# Topic index\n")
	files := map[string][]byte{}
	var texts []string
	left := n - 120 - 300
	topics := 25
	for t := 0; t < topics; t++ {
		slug := fmt.Sprintf("topic-%02d", t)
		fmt.Fprintf(&core, "- Topic %d → topics/%s.md\n", t, slug)
		var b strings.Builder
		fmt.Fprintf(&b, "# Topic %d\n\n", t)
		for i := 0; i < left/topics; i++ {
			s := sentence(10)
			texts = append(texts, s)
			fmt.Fprintf(&b, "- [%s] %s (session summary · 2025-%02d-%02d · refs s-%d)\n", next("fact"), s, 1+i%12, 1+i%28, i)
		}
		files["topics/"+slug+".md"] = []byte(b.String())
	}
	core.WriteString("\n# Archive\n")
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&core, "- [%s] %s (user · 2024-01-01 · superseded by fact-001 on 2025-01-01)\n", next("note"), sentence(8))
	}
	files["MEMORY.md"] = []byte(core.String())
	files[".gitignore"] = []byte(templates.Embedded("gitignore.tmpl"))
	return files, texts
}

// TestConsolidateBenchmark measures 1,000 candidates into 10,000 entries
// with the fake LLM. Run with MEMCTL_BENCH=1 go test -run Benchmark -v.
func TestConsolidateBenchmark(t *testing.T) {
	if os.Getenv("MEMCTL_BENCH") == "" {
		t.Skip("set MEMCTL_BENCH=1")
	}
	rng := rand.New(rand.NewPCG(7, 7))
	files, texts := bigMemory(rng, 10000)
	dir := newRepo(t, string(files["MEMORY.md"]), "")
	s := open(t, dir)
	unlock, _ := s.Lock(context.Background())
	if _, err := s.Write(context.Background(), files, mdmem.CommitMessage{Subject: "big"}); err != nil {
		t.Fatal(err)
	}
	unlock()
	var cs []*mdmem.Candidate
	kinds := map[string]int{}
	for i := 0; i < 1000; i++ {
		var text string
		switch r := rng.IntN(10); {
		case r < 3: // exact duplicate (reworded case/punctuation)
			text = strings.ToUpper(texts[rng.IntN(len(texts))][:1]) + texts[rng.IntN(len(texts))][1:] + "."
			kinds["dup"]++
		case r < 5: // similar to an entry: a few words changed → ambiguous
			w := strings.Fields(texts[rng.IntN(len(texts))])
			for k := 0; k < 3; k++ {
				w[rng.IntN(len(w))] = word(20000 + rng.IntN(20000))
			}
			text = strings.Join(w, " ")
			kinds["similar"]++
		default:
			w := make([]string, 10)
			for k := range w {
				w[k] = word(40000 + rng.IntN(20000))
			}
			text = strings.Join(w, " ")
			kinds["new"]++
		}
		cs = append(cs, cand(text, []string{"fact", "fact", "note", "decision"}[rng.IntN(4)], testNow.Add(-time.Hour)))
	}
	m0, _ := mdmem.Load(context.Background(), dir)
	enqueue(t, dir, cs...)
	srv := fakellm.New([]fakellm.Step{{Auto: "add", Repeat: true}})
	defer srv.Close()
	c0, w0 := cpuTime(), time.Now()
	rep, err := Run(context.Background(), open(t, dir), withInject(Options{Completer: NewOpenAI(srv.URL+"/v1", "k", "fake"), Now: func() time.Time { return testNow }}))
	if err != nil {
		t.Fatal(err)
	}
	cpu, wall := cpuTime()-c0, time.Since(w0)
	m, _ := mdmem.Load(context.Background(), dir)
	core := CoreSize(m.Main)
	perCand := 0.0
	if rep.LLM.Candidates > 0 {
		perCand = float64(rep.LLM.PromptTokens) / float64(rep.LLM.Candidates)
	}
	t.Logf("entries before %d, candidates %d (%v)", len(m0.Entries()), len(cs), kinds)
	t.Logf("summary: %s; consumed %d, held %d", rep.Summary, len(rep.Plan.Consumed), len(rep.Plan.Held))
	t.Logf("LLM: %d calls, %d batches, %d candidates sent, %d prompt tokens (%.0f per candidate sent, %.1f per queued candidate), %d completion tokens",
		rep.LLM.Calls, rep.LLM.Batches, rep.LLM.Candidates, rep.LLM.PromptTokens, perCand, float64(rep.LLM.PromptTokens)/float64(len(cs)), rep.LLM.CompletionTokens)
	t.Logf("wall %v (LLM stage %.2fs), process CPU %v (includes the in-process fake server), entries after %d, core %s",
		wall.Round(time.Millisecond), rep.LLMSeconds, cpu.Round(time.Millisecond), len(m.Entries()), core)
	if rep.LLM.Calls > 60 {
		t.Errorf("LLM calls %d > 60", rep.LLM.Calls)
	}
	if CoreLimits(s.Config).over(core) {
		t.Errorf("core over its limits: %s", core)
	}
	if cpu > 10*time.Second {
		t.Errorf("CPU %v > 10s", cpu)
	}
}
