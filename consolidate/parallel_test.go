package consolidate

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/memctl/memctl/consolidate/fakellm"
	"github.com/memctl/memctl/mdmem"
)

// services are the subjects of the parallel tests' entries and
// candidates: one entry and one update of it each.
var services = []string{"order", "billing", "search", "report", "login", "catalog", "payment", "shipping"}

// serviceOf is the index in services of the first candidate of a
// request (-1 for none).
func serviceOf(user string) int {
	for _, it := range fakellm.ParseItems(user) {
		if it.Kind != "candidate" {
			continue
		}
		for i, s := range services {
			if strings.HasPrefix(it.Text, "The "+s+" ") {
				return i
			}
		}
	}
	return -1
}

// answerOrder is a Completer that notes which request each answer was
// for, in the order the answers arrive.
type answerOrder struct {
	Completer
	mu   sync.Mutex
	sent []int
	got  []int
}

func (a *answerOrder) Complete(ctx context.Context, r Request) (Response, error) {
	a.mu.Lock()
	a.sent = append(a.sent, serviceOf(r.User))
	a.mu.Unlock()
	resp, err := a.Completer.Complete(ctx, r)
	a.mu.Lock()
	a.got = append(a.got, serviceOf(r.User))
	a.mu.Unlock()
	return resp, err
}

// TestDecisionsIndependentOfAnswerOrder: the same queue, asked four
// batches at a time with answers arriving reversed or shuffled, commits
// byte for byte what one call after another commits: the same files, the
// same message, the same new ids. The oracle supersedes every entry (new
// ids in decision order); archive-first has every batch archive the
// entry they all show, each for its own reason (the first answer applied
// wins). The progress and the usage count every batch once.
func TestDecisionsIndependentOfAnswerOrder(t *testing.T) {
	var gold []fakellm.Gold
	cs := []*mdmem.Candidate{}
	for _, s := range services {
		text := fmt.Sprintf("The %s service uses Memcached for its cache layer now", s)
		gold = append(gold, fakellm.Gold{Candidate: text, Kind: "update", Target: fmt.Sprintf("The %s service uses Redis for its cache layer", s)})
		cs = append(cs, cand(text, "decision", testNow.Add(-time.Hour)))
	}
	timings := []struct {
		name     string
		parallel int
		delay    func(service int, unit time.Duration) time.Duration
	}{
		{"one call after another", 1, nil},
		{"4 at once, answers reversed", 4, func(i int, unit time.Duration) time.Duration { return time.Duration(len(services)-i) * unit }},
		{"4 at once, answers shuffled", 4, func(i int, unit time.Duration) time.Duration {
			return time.Duration([]int{3, 1, 8, 2, 6, 5, 7, 4}[i]) * unit
		}},
	}
	for _, sc := range []struct {
		step  fakellm.Step
		check func(rep *Report) bool
	}{
		{fakellm.Step{Auto: "oracle", Gold: gold, Repeat: true}, func(rep *Report) bool { return rep.Summary.Superseded == len(services) }},
		{fakellm.Step{Auto: "archive-first", Repeat: true}, func(rep *Report) bool { return rep.Summary.Added == len(services) && rep.Summary.Archived == 1 }},
	} {
		type outcome struct{ files, message, ops string }
		var want outcome
		for _, tm := range timings {
			t.Run(sc.step.Auto+", "+tm.name, func(t *testing.T) {
				// On a loaded machine the delays may not reorder the
				// answers: then the run is repeated with longer ones.
				var rep *Report
				var dir string
				for unit := 40 * time.Millisecond; ; unit *= 2 {
					dir = newRepo(t, ambiguousMemory(), fmt.Sprintf("[llm]\nparallel = %d\n[consolidate]\nbatch_size = 2\nmax_archive_share = 1\n", tm.parallel))
					enqueue(t, dir, cs...)
					srv := fakellm.New([]fakellm.Step{sc.step})
					defer srv.Close()
					if tm.delay != nil {
						srv.SetDelay(func(r fakellm.Request) time.Duration { return tm.delay(serviceOf(r.User), unit) })
					}
					comp := &answerOrder{Completer: NewOpenAI(srv.URL+"/v1", "k", "m")}
					var progress []string
					rep = run(t, dir, Options{Completer: comp, Progress: func(done, total int) { progress = append(progress, fmt.Sprintf("%d/%d", done, total)) }})
					if p := strings.Join(progress, " "); p != "0/4 1/4 2/4 3/4 4/4" {
						t.Errorf("progress %s, want each batch counted once as it is answered", p)
					}
					if rep.LLM.Batches != 4 || rep.LLM.Calls != 4 || rep.LLM.FailedBatches != 0 || !sc.check(rep) {
						t.Fatalf("usage %+v, summary %+v (want 4 batches answered); held %+v", rep.LLM, rep.Summary, rep.Plan.Held)
					}
					if tm.delay == nil || fmt.Sprint(comp.got) != fmt.Sprint(comp.sent) {
						break
					}
					if unit >= 640*time.Millisecond {
						t.Fatalf("answers arrived in the order sent (%v) at every delay: the test proves nothing", comp.got)
					}
				}
				var ops []string
				for _, o := range rep.Plan.Ops {
					ops = append(ops, FormatOp(o))
				}
				// every committed file but the config, which sets llm.parallel
				var files []string
				for _, l := range strings.Split(git(t, dir, "ls-tree", "-r", "HEAD"), "\n") {
					if !strings.HasSuffix(l, "\t"+mdmem.ConfigPath) {
						files = append(files, l)
					}
				}
				got := outcome{strings.Join(files, "\n"), git(t, dir, "log", "-1", "--format=%B"), strings.Join(ops, "\n")}
				if tm.parallel == 1 {
					want = got
					return
				}
				if got.ops != want.ops {
					t.Errorf("operations\n%s\nwant (one call after another)\n%s", got.ops, want.ops)
				}
				if got.message != want.message {
					t.Errorf("commit message\n%s\nwant\n%s", got.message, want.message)
				}
				if got.files != want.files {
					t.Errorf("committed files\n%s\nwant\n%s", got.files, want.files)
				}
			})
		}
	}
}

// TestCancelStopsEveryCall: cancelling the run (Ctrl-C) while two calls
// hang stops both, sends no further batch, returns only once every call
// has returned (no goroutine left behind), and writes nothing: every
// candidate stays queued.
func TestCancelStopsEveryCall(t *testing.T) {
	dir := newRepo(t, ambiguousMemory(), "[llm]\ntimeout = \"1h\"\nparallel = 2\n[consolidate]\nbatch_size = 1\n")
	var cs []*mdmem.Candidate
	for _, s := range services {
		cs = append(cs, cand(fmt.Sprintf("The %s service uses Memcached for its cache layer now", s), "decision", testNow.Add(-time.Hour)))
	}
	enqueue(t, dir, cs...)
	before := head(t, dir)
	var calls, inFlight atomic.Int32
	started := make(chan struct{}, len(cs))
	hang := completerFunc(func(ctx context.Context, r Request) (Response, error) {
		calls.Add(1)
		inFlight.Add(1)
		defer inFlight.Add(-1)
		started <- struct{}{}
		<-ctx.Done()
		return Response{}, ctx.Err()
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		<-started
		<-started
		cancel()
	}()
	goroutines := runtime.NumGoroutine()
	_, err := Run(ctx, open(t, dir), withInject(Options{Completer: hang, Now: func() time.Time { return testNow }}))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if n := inFlight.Load(); n != 0 {
		t.Fatalf("Run returned with %d calls still running", n)
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d calls, want the 2 running when cancelled and no more", n)
	}
	if head(t, dir) != before {
		t.Error("a cancelled run committed")
	}
	if q := queued(t, dir); len(q) != len(cs) {
		t.Errorf("%d of %d candidates still queued", len(q), len(cs))
	}
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > goroutines; {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after the run, %d before", runtime.NumGoroutine(), goroutines)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestOverLimitClusterSentAlone: with a token limit no prompt can meet,
// every cluster still reaches the model, alone, and a trace line says so.
func TestOverLimitClusterSentAlone(t *testing.T) {
	dir, cs := ambiguousSetup(t, "[consolidate]\nbatch_tokens = 1\n")
	var traces []string
	srv := fakellm.New([]fakellm.Step{{Auto: "add", Repeat: true}})
	defer srv.Close()
	rep := run(t, dir, Options{Completer: NewOpenAI(srv.URL+"/v1", "k", "m"), Trace: func(format string, args ...any) {
		traces = append(traces, fmt.Sprintf(format, args...))
	}})
	if rep.LLM.Candidates != len(cs) || rep.LLM.FailedBatches != 0 || rep.Summary.Added != len(cs) {
		t.Fatalf("usage %+v, summary %+v: want every candidate sent and added", rep.LLM, rep.Summary)
	}
	alone := 0
	for _, tr := range traces {
		if strings.Contains(tr, "over consolidate.batch_tokens = 1; sent alone") {
			alone++
		}
	}
	if alone == 0 || alone != rep.LLM.Batches {
		t.Errorf("%d of %d batches said to go alone; traces:\n%s", alone, rep.LLM.Batches, strings.Join(traces, "\n"))
	}
}
