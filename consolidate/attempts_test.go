package consolidate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memctl/memctl/mdmem"
)

// inventingCompleter always answers with an invented id: every batch is
// rejected, its candidates stay queued.
var inventingCompleter = completerFunc(func(ctx context.Context, r Request) (Response, error) {
	return Response{Text: `{"operations":[{"op":"merge","target":999,"sources":[4],"text":"","category":"","reason":"dup"}]}`}, nil
})

type failpointExit struct{}

// runCrash runs consolidate with a failpoint; the "exit" unwinds the run.
func runCrash(t *testing.T, dir, fp string, o Options) {
	t.Helper()
	o.Getenv = func(k string) string {
		if k == FailpointEnv {
			return fp
		}
		return ""
	}
	o.Exit = func(int) { panic(failpointExit{}) }
	defer func() {
		if r := recover(); r == nil {
			t.Fatalf("failpoint %s not reached", fp)
		} else if _, ok := r.(failpointExit); !ok {
			panic(r)
		}
	}()
	run(t, dir, o)
}

// TestCandidatesLeaveQueueAfterMaxAttempts: candidates the model keeps
// failing on move to Pending confirmation on the max_attempts-th failed
// run, consumed exactly once (ledger and trailer) like any other, even
// when that run crashes after its commit.
func TestCandidatesLeaveQueueAfterMaxAttempts(t *testing.T) {
	dir, cs := ambiguousSetup(t, "")
	h0 := head(t, dir)
	for i := 1; i <= 2; i++ {
		rep := run(t, dir, Options{Completer: inventingCompleter})
		if rep.Summary.Held != 3 || rep.Commit != "" || head(t, dir) != h0 {
			t.Fatalf("run %d: %+v commit %q", i, rep.Summary, rep.Commit)
		}
		for _, h := range rep.Plan.Held {
			if h.Kind != HoldLLM || h.Attempts != i {
				t.Fatalf("run %d: hold %+v", i, h)
			}
		}
		if !strings.Contains(FormatOp(rep.Plan.Ops[0]), "failed run") {
			t.Fatalf("run %d: op %s", i, FormatOp(rep.Plan.Ops[0]))
		}
	}
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("the attempts file is not git-ignored:\n%s", st)
	}
	// An edited candidate starts again.
	edited := *cs[2]
	edited.Content += " (edited)"
	enqueue(t, dir, &edited)

	runCrash(t, dir, FailAfterCommit, Options{Completer: inventingCompleter})
	rep := run(t, dir, Options{Completer: inventingCompleter})
	// The edited candidate counted one failure in the crashed run, lost
	// with the crash (the count is written after the commit): this is its
	// first counted failure.
	// The crashed run's commit landed: recovery finishes its dequeue (the
	// ledger reconcile would otherwise).
	if !strings.Contains(rep.Recovered, "finished \"consolidate") || len(rep.Reconciled) != 0 || rep.Summary.Held != 1 || rep.Plan.Held[0].Candidate != cs[2].ID || rep.Plan.Held[0].Attempts != 1 {
		t.Fatalf("after the crash: reconciled %v, held %+v", rep.Reconciled, rep.Plan.Held)
	}
	if n := consolidateCommits(t, dir); n != 1 {
		t.Fatalf("%d consolidate commits", n)
	}
	msg := git(t, dir, "log", "-1", "--format=%B")
	for _, c := range cs[:2] {
		if strings.Count(msg, "Memctl-Consumed: "+c.ID) != 1 || strings.Count(readFile(t, dir, mdmem.LedgerPath(c.ID)), c.ID+" ") != 1 {
			t.Fatalf("%s not consumed once:\n%s", c.ID, msg)
		}
	}
	s := open(t, dir)
	m, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p := Pending(m)
	if why := strings.Join(p[0].Why, ";"); len(p) != 2 || !strings.Contains(why, "no usable LLM decision in 3 runs: the model call or its answer failed") || strings.Contains(why, "999") {
		t.Fatalf("pending %+v", p)
	}
	// The edited candidate follows on its own third failure.
	if rep = run(t, dir, Options{Completer: inventingCompleter}); rep.Summary.Held != 1 {
		t.Fatalf("%+v", rep.Summary)
	}
	rep = run(t, dir, Options{Completer: inventingCompleter})
	if rep.Summary.Pending != 1 || len(queued(t, dir)) != 0 {
		t.Fatalf("%+v queue %v", rep.Summary, queued(t, dir))
	}
	if _, err := os.Stat(filepath.Join(dir, AttemptsPath)); !os.IsNotExist(err) {
		t.Fatalf("attempts file left with nothing queued: %v", err)
	}
	// Confirming drops the note.
	if _, err := Confirm(context.Background(), open(t, dir), p[0].ID, "", false, testNow); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(readFile(t, dir, "MEMORY.md"), "\n") {
		if strings.Contains(l, "["+p[0].ID+"]") && strings.Contains(l, noDecisionNote) {
			t.Fatalf("confirmed entry keeps the note: %s", l)
		}
	}
	h := head(t, dir)
	if rep := run(t, dir, Options{Completer: inventingCompleter}); !rep.NothingToDo || head(t, dir) != h {
		t.Fatalf("fourth run: %+v", rep.Summary)
	}
}

// TestSecretCandidateQuarantined: a candidate with a secret is held and
// reported, then moved to .memctl/queue/held/ (never committed, never in
// the memory) and reported there on every later run.
func TestSecretCandidateQuarantined(t *testing.T) {
	dir := newRepo(t, baseMemory, "[consolidate]\nmax_attempts = 2\n")
	secret := cand("The deploy key is sk-proj-R8kQ2vXm9LpT4sWz7NcB1yHd6JfG3aE5", "fact", testNow)
	bad := cand("Valid text", "no-such-category", testNow)
	enqueue(t, dir, secret, bad)
	orig, _ := os.ReadFile(filepath.Join(dir, mdmem.QueueDir, secret.ID+".json"))
	h0 := head(t, dir)
	rep := run(t, dir, Options{NoLLM: true})
	kinds := map[string]string{}
	for _, h := range rep.Plan.Held {
		kinds[h.Candidate] = h.Kind
	}
	if rep.Summary.Held != 2 || kinds[secret.ID] != HoldSecret || kinds[bad.ID] != HoldInvalid || rep.NothingToDo {
		t.Fatalf("first run: %+v %+v", rep.Summary, rep.Plan.Held)
	}
	js, _ := json.Marshal(rep)
	if strings.Contains(string(js), "sk-abc") || !strings.Contains(string(js), "contains a secret") {
		t.Fatalf("report: %s", js)
	}
	rep = run(t, dir, Options{NoLLM: true})
	if rep.Summary.Quarantined != 2 || len(rep.Quarantined) != 2 || len(rep.HeldFiles) != 2 || rep.Commit != "" || head(t, dir) != h0 {
		t.Fatalf("second run: %+v quarantined %+v held files %+v", rep.Summary, rep.Quarantined, rep.HeldFiles)
	}
	if q := queued(t, dir); len(q) != 0 {
		t.Fatalf("queue %v", q)
	}
	moved, err := os.ReadFile(filepath.Join(dir, HeldDir, secret.ID+".json"))
	if err != nil || string(moved) != string(orig) {
		t.Fatalf("held file %v: %q", err, moved)
	}
	if st := git(t, dir, "status", "--porcelain", "--ignored=no"); st != "" {
		t.Fatalf("status:\n%s", st)
	}
	if out := git(t, dir, "log", "--all", "-p"); strings.Contains(out, "sk-abc") {
		t.Fatal("the secret reached git")
	}
	rep = run(t, dir, Options{NoLLM: true})
	if !rep.NothingToDo || len(rep.HeldFiles) != 2 || rep.HeldFiles[0].Attempts != 2 || rep.HeldFiles[0].Reason == "" {
		t.Fatalf("third run: %+v", rep.HeldFiles)
	}
	for _, h := range rep.HeldFiles {
		if h.Candidate == secret.ID && (h.Kind != HoldSecret || !strings.Contains(h.Reason, "secret")) {
			t.Fatalf("held file %+v", h)
		}
	}
}

// TestArchiveLimitHoldNotCounted: a candidate held only because the run
// reached its archive limit is retried without counting a failure.
func TestArchiveLimitHoldNotCounted(t *testing.T) {
	m := loadMem(t, map[string]string{"MEMORY.md": baseMemory})
	cfg := testConfig()
	cfg.Consolidate.MaxArchiveShare = 0
	c := cand("Example code uses Python 3.12; no Python 2 syntax", "preference", testNow)
	p, err := Compute(wired(&Input{Mem: m, Cands: []*mdmem.Candidate{c}, Config: cfg, Now: testNow, Attempts: map[string]int{c.ID: 10}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Held) != 1 || p.Held[0].Kind != HoldLimit || p.Count(OpPending) != 0 || len(p.Quarantine) != 0 {
		t.Fatalf("held %+v ops %v", p.Held, p.Ops)
	}
}
