package consolidate

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/consolidate/fakellm"
	"github.com/memctl/memctl/mdmem"
)

// helper returns a command running consolidate on dir in a child process.
func helper(dir string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+dir)
	cmd.Env = append(cmd.Env, env...)
	return cmd
}

func crashCands() []*mdmem.Candidate {
	d := testNow.Add(-time.Hour)
	cs := ambiguousCands()
	cs = append(cs,
		cand("The review service uses Redis for its cache layer", "decision", d), // exact duplicate of dec-010
		cand("Example code uses Python 3.12", "preference", d),
		cand("Deploys happen on Tuesdays", "decision", d),
		cand("The invoice PDF renderer is wkhtmltopdf", "fact", d),
	)
	return cs
}

func consolidateCommits(t testing.TB, dir string) int {
	return strings.Count(git(t, dir, "log", "--format=%(trailers:key=Memctl-Op,valueonly)"), "consolidate")
}

func TestCrashPointSweep(t *testing.T) {
	t.Parallel() // long: runs beside the package's other tests
	srv := fakellm.New([]fakellm.Step{{Auto: "add", Repeat: true}})
	defer srv.Close()
	llmEnv := []string{"OPENAI_BASE_URL=" + srv.URL + "/v1", "OPENAI_API_KEY=k", "MEMCTL_MODEL=fake"}
	for _, mode := range []string{"rules", "llm"} {
		cs := crashCands()
		var env []string
		if mode == "llm" {
			env = llmEnv
		}
		// The reference: a run without a crash.
		ref := newRepo(t, ambiguousMemory(), "")
		enqueue(t, ref, cs...)
		if out, err := helper(ref, env...).CombinedOutput(); err != nil {
			t.Fatalf("reference run: %v\n%s", err, out)
		}
		refTree := git(t, ref, "rev-parse", "HEAD^{tree}")
		for _, fp := range []string{FailAfterLLM, FailAfterWrite, FailAfterCommit, FailMidDequeue} {
			t.Run(mode+"/"+fp, func(t *testing.T) {
				dir := newRepo(t, ambiguousMemory(), "")
				enqueue(t, dir, cs...)
				out, err := helper(dir, append(env, FailpointEnv+"="+fp)...).CombinedOutput()
				if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != FailpointExit {
					t.Fatalf("crash run: %v\n%s", err, out)
				}
				if out, err := helper(dir, env...).CombinedOutput(); err != nil {
					t.Fatalf("rerun: %v\n%s", err, out)
				}
				if tree := git(t, dir, "rev-parse", "HEAD^{tree}"); tree != refTree {
					t.Fatalf("tree %s differs from the reference %s:\n%s", tree, refTree, git(t, dir, "diff", refTree, "HEAD"))
				}
				if n := consolidateCommits(t, dir); n != 1 {
					t.Fatalf("%d consolidate commits, want 1", n)
				}
				if q := queued(t, dir); len(q) != 0 {
					t.Fatalf("queue %v", q)
				}
				if st := git(t, dir, "status", "--porcelain"); st != "" {
					t.Fatalf("status:\n%s", st)
				}
				gitFsck(t, dir)
				// A third run has nothing to do.
				h := head(t, dir)
				if out, err := helper(dir, env...).CombinedOutput(); err != nil || head(t, dir) != h {
					t.Fatalf("third run: %v\n%s", err, out)
				}
			})
		}
	}
}

func TestKillLoop(t *testing.T) {
	t.Parallel() // long: runs beside the package's other tests
	if testing.Short() {
		t.Skip("kill loop skipped with -short")
	}
	dir := newRepo(t, baseMemory, "")
	rng := rand.New(rand.NewPCG(1, 2))
	var texts []string
	var ids []string
	start := time.Now()
	const loops = 60 // make soak kills far more, at every step of the write path
	for i := 0; i < loops; i++ {
		var cs []*mdmem.Candidate
		for k := 0; k < 3; k++ {
			var w []string
			for j := 0; j < 6; j++ {
				w = append(w, word(rng.IntN(1_000_000)))
			}
			text := fmt.Sprintf("Observation %s", strings.Join(w, " "))
			texts = append(texts, text)
			c := cand(text, []string{"fact", "decision", "preference"}[k], testNow)
			ids = append(ids, c.ID)
			cs = append(cs, c)
		}
		enqueue(t, dir, cs...)
		cmd := helper(dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(40_000)) * time.Microsecond)
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		run(t, dir, Options{NoLLM: true})
		if i%25 == 0 {
			gitFsck(t, dir)
		}
	}
	gitFsck(t, dir)
	if st := git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("status:\n%s", st)
	}
	if q := queued(t, dir); len(q) != 0 {
		t.Fatalf("queue %v", q)
	}
	all := readFile(t, dir, "MEMORY.md")
	tps, _ := filepath.Glob(filepath.Join(dir, "topics", "*.md"))
	for _, tp := range tps {
		all += readFile(t, dir, filepath.Join("topics", filepath.Base(tp)))
	}
	for _, x := range texts {
		if n := strings.Count(all, x+" ("); n != 1 {
			t.Fatalf("%q appears %d times", x, n)
		}
	}
	paths := map[string]bool{}
	for _, id := range ids {
		paths[mdmem.LedgerPath(id)] = true
	}
	ledger := ""
	for p := range paths {
		ledger += readFile(t, dir, p)
	}
	for _, id := range ids {
		if n := strings.Count(ledger, id+" "); n != 1 {
			t.Fatalf("candidate %s in the ledger %d times", id, n)
		}
	}
	t.Logf("%d kill -9 loops in %v; %d commits", loops, time.Since(start).Round(time.Millisecond), consolidateCommits(t, dir))
}

func TestConcurrentRuns(t *testing.T) {
	dir := newRepo(t, baseMemory, "")
	cs := crashCands()
	enqueue(t, dir, cs...)
	a, b := helper(dir), helper(dir)
	var outA, outB strings.Builder
	a.Stderr, b.Stderr = &outA, &outB
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	errA, errB := a.Wait(), b.Wait()
	if errA != nil || errB != nil {
		t.Fatalf("runs: %v %s / %v %s", errA, outA.String(), errB, outB.String())
	}
	if n := consolidateCommits(t, dir); n != 1 {
		t.Fatalf("%d consolidate commits, want 1 (the second run finds nothing to do)", n)
	}
	msg := git(t, dir, "log", "-1", "--format=%B")
	for _, c := range cs {
		if strings.Count(msg, "Memctl-Consumed: "+c.ID) != 1 {
			t.Fatalf("candidate %s not consumed once:\n%s", c.ID, msg)
		}
	}
	if q := queued(t, dir); len(q) != 0 {
		t.Fatalf("queue %v", q)
	}
}
