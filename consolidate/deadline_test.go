package consolidate

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// TestLockReleasedDuringLLMCalls: while the model works, other
// writers (an import, the next cron run) can take the lock.
func TestLockReleasedDuringLLMCalls(t *testing.T) {
	dir, _ := ambiguousSetup(t, "[git]\nlock_wait = \"0s\"\n")
	var during error
	comp := completerFunc(func(ctx context.Context, r Request) (Response, error) {
		other := open(t, dir)
		_, during = other.Import(ctx, []*mdmem.Candidate{{Content: "Imported while the model thinks", Category: "fact", CreatedAt: testNow}})
		return Response{Text: `{"operations":[]}`}, nil
	})
	rep := run(t, dir, Options{Completer: comp})
	if during != nil {
		t.Fatalf("import during the LLM call: %v", during)
	}
	if !strings.Contains(readFile(t, dir, "topics/fact.md"), "Imported while the model thinks") {
		t.Fatal("the import did not land")
	}
	if rep.LLMStatus == "" {
		t.Errorf("no LLM status in the report")
	}
	gitFsck(t, dir)
}

// TestOverallLLMDeadline: a hanging endpoint costs at most
// llm.deadline per run, not timeout × retries per batch; the run says the
// model could not be used and the candidates stay queued. One call at a
// time, the batches after the first are never sent; with llm.parallel
// they hang together; either way every batch counts as failed.
func TestOverallLLMDeadline(t *testing.T) {
	for _, tc := range []struct {
		parallel, wantCalls int
	}{
		{parallel: 1, wantCalls: 1},
		{parallel: 2, wantCalls: 2},
		{parallel: 4, wantCalls: 3}, // the 3 batches at once
	} {
		t.Run(fmt.Sprintf("parallel=%d", tc.parallel), func(t *testing.T) {
			dir, cs := ambiguousSetup(t, fmt.Sprintf("[llm]\ntimeout = \"1h\"\ndeadline = \"300ms\"\nparallel = %d\n[consolidate]\nbatch_size = 1\n", tc.parallel))
			var calls atomic.Int32
			hang := completerFunc(func(ctx context.Context, r Request) (Response, error) {
				calls.Add(1)
				<-ctx.Done()
				return Response{}, ctx.Err()
			})
			start := time.Now()
			rep := run(t, dir, Options{Completer: hang})
			if d := time.Since(start); d > 20*time.Second {
				t.Fatalf("run took %v with a 300ms deadline", d)
			}
			if rep.LLMStatus != "unavailable" || !rep.LLM.DeadlineHit {
				t.Fatalf("status %q, deadline hit %v", rep.LLMStatus, rep.LLM.DeadlineHit)
			}
			if n := int(calls.Load()); n != tc.wantCalls {
				t.Errorf("%d calls, want %d", n, tc.wantCalls)
			}
			if rep.LLM.FailedBatches != len(cs) || rep.LLM.Batches != tc.wantCalls {
				t.Errorf("usage %+v: want %d failed batches, %d sent", rep.LLM, len(cs), tc.wantCalls)
			}
			if q := queued(t, dir); len(q) != len(cs) {
				for _, o := range rep.Plan.Ops {
					t.Log(FormatOp(o))
				}
				t.Fatalf("queue %v", q)
			}
			if rep.Summary.Held != len(cs) {
				t.Fatalf("summary %+v", rep.Summary)
			}
			notAsked := 0
			for _, h := range rep.Plan.Held {
				if strings.Contains(h.Reason, "deadline was reached before the model was asked") {
					notAsked++
				}
			}
			if notAsked != len(cs)-tc.wantCalls {
				t.Errorf("%d candidates held as not asked, want %d: %+v", notAsked, len(cs)-tc.wantCalls, rep.Plan.Held)
			}
		})
	}
}

// TestIDsExhaustedIsAnError: an id prefix at its largest number (from
// state.json or a hand-written id) makes consolidate refuse with an error,
// never panic, and write nothing.
func TestIDsExhaustedIsAnError(t *testing.T) {
	dir := newRepo(t, "# Core profile\n\n## Key decisions\n- [dec-999999999] Last possible id\n\n# Archive\n", "")
	enqueue(t, dir, cand("Deploys happen on Tuesdays", "decision", testNow))
	h := head(t, dir)
	_, err := Run(context.Background(), open(t, dir), withInject(Options{NoLLM: true, Now: func() time.Time { return testNow }}))
	if err == nil || !strings.Contains(err.Error(), "no decision id left") {
		t.Fatalf("err %v", err)
	}
	if head(t, dir) != h || len(queued(t, dir)) != 1 {
		t.Fatal("something was written")
	}
}

// TestCommittedDuplicateIDRenumbered: a duplicated id already
// in the committed files (a person's own git commit, or from before
// renumbering existed) is renumbered by memctl's next write, in a commit
// of its own, before anything else is planned; never written around.
func TestCommittedDuplicateIDRenumbered(t *testing.T) {
	dir := newRepo(t, "# Core profile\n\n## Key decisions\n- [dec-001] One\n- [dec-001] Two\n\n# Archive\n", "")
	enqueue(t, dir, cand("Deploys happen on Tuesdays", "decision", testNow))
	run(t, dir, Options{NoLLM: true})
	main := readFile(t, dir, "MEMORY.md")
	if strings.Count(main, "[dec-001]") != 1 || !strings.Contains(main, "[dec-002] Two") || !strings.Contains(main, "[dec-003] Deploys happen on Tuesdays") {
		t.Fatalf("MEMORY.md:\n%s", main)
	}
	if log := git(t, dir, "log", "--format=%s"); !strings.Contains(log, "renumber 1 duplicate id") {
		t.Fatalf("log:\n%s", log)
	}
}
