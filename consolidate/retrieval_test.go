package consolidate

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/consolidate/fakellm"
	"github.com/memctl/memctl/inject"
	"github.com/memctl/memctl/mdmem"
)

// importedMemory makes a memory from entries through memctl import (so
// topics become topic files) and queues cands, as memctl add --json
// would (fresh ids).
func importedMemory(t *testing.T, entries, cands []*mdmem.Candidate) string {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	s, _, err := mdmem.Init(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Now = func() time.Time { return testNow }
	holdOff(t, s) // see testConfig
	norm := func(cs []*mdmem.Candidate) []*mdmem.Candidate {
		var out []*mdmem.Candidate
		for _, c := range cs {
			cc := *c
			cc.ID = ""
			if err := cc.Normalize(testNow, 1<<20, nil); err != nil {
				t.Fatal(err)
			}
			out = append(out, &cc)
		}
		return out
	}
	if _, err := s.Import(ctx, norm(entries)); err != nil {
		t.Fatal(err)
	}
	if _, err := mdmem.Enqueue(ctx, dir, norm(cands), testNow); err != nil {
		t.Fatal(err)
	}
	return dir
}

func topicCand(text, cat, topic string, created time.Time) *mdmem.Candidate {
	c := cand(text, cat, created)
	c.Topic = topic
	return c
}

// retrievalMemory: preferences in three topic files, worded so that the
// two updates below share no word with their targets.
func retrievalMemory() []*mdmem.Candidate {
	old := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	var es []*mdmem.Candidate
	for _, x := range [][2]string{
		{"travel", "On flights Alex wants an aisle seat near the front"},
		{"travel", "Hotel rooms should be on a high floor away from lifts"},
		{"travel", "Alex packs hand luggage only for trips under a week"},
		{"home", "Alex's alarm is set for 6:15 on weekdays"},
		{"home", "The thermostat stays at 19 degrees in winter"},
		{"home", "Bins go out on Thursday evenings"},
		{"food", "Alex drinks oat milk flat whites, no sugar"},
		{"food", "Friday dinner is usually homemade pizza"},
		{"food", "Alex avoids coriander in every dish"},
		{"work", "Alex prefers written agendas before every meeting"},
		{"work", "Focus time is blocked on Wednesday mornings"},
		{"work", "Slides use the company template with dark backgrounds"},
	} {
		es = append(es, topicCand(x[1], "preference", x[0], old))
	}
	return es
}

// TestRewordedUpdateReachesTheModel: an update that shares no word with
// its target reaches the LLM in the same request as the target: one by
// stemming ("weekday" for "weekdays"), one by its topic alone.
func TestRewordedUpdateReachesTheModel(t *testing.T) {
	cases := []struct{ cand, topic, target string }{
		{"Weekday wake-up is at quarter to six", "", "Alex's alarm is set for 6:15 on weekdays"},
		{"Now books window places so the kids can look out", "travel", "On flights Alex wants an aisle seat near the front"},
	}
	for _, tc := range cases {
		t.Run(tc.cand, func(t *testing.T) {
			a, b := map[string]bool{}, map[string]bool{}
			for _, w := range tokens(tc.cand) {
				a[w] = !fillerWords[w]
			}
			for _, w := range tokens(tc.target) {
				b[w] = true
			}
			for w, content := range a {
				if content && b[w] {
					t.Fatalf("the pair shares the word %q: not a test of rewording", w)
				}
			}
			dir := importedMemory(t, retrievalMemory(), []*mdmem.Candidate{topicCand(tc.cand, "preference", tc.topic, testNow)})
			srv := fakellm.New([]fakellm.Step{{Auto: "add", Repeat: true}})
			defer srv.Close()
			run(t, dir, fakeOptions(srv))
			var found bool
			for _, r := range srv.Requests() {
				var c, e bool
				for _, it := range r.Items {
					c = c || it.Kind == "candidate" && it.Text == tc.cand
					e = e || it.Kind == "entry" && it.Text == tc.target
				}
				found = found || c && e
			}
			if !found {
				t.Fatalf("the target was not in the candidate's request: %+v", srv.Requests())
			}
		})
	}
}

// TestRequestsDeterministic: the same memory and queue, built twice (the
// candidates get other random id suffixes), send byte-identical requests.
func TestRequestsDeterministic(t *testing.T) {
	var cands []*mdmem.Candidate
	for i, x := range []string{
		"Weekday wake-up is at quarter to six",
		"Alex now books window seats for the kids",
		"Alex has given up coffee and drinks tea",
		"Focus time moved to Thursday mornings",
		"Alex packs a carry-on only for trips under five days",
		"Bins go out on Wednesday evenings now",
		"Alex likes to sail on summer weekends",
	} {
		// Two dates for seven lines: the order within a date is the
		// input order (queue file name).
		cands = append(cands, cand(x, "preference", testNow.Add(-time.Duration(i%2)*time.Hour)))
	}
	var reqs [2][]fakellm.Request
	for n := range reqs {
		dir := importedMemory(t, retrievalMemory(), cands)
		srv := fakellm.New([]fakellm.Step{{Auto: "add", Repeat: true}})
		run(t, dir, fakeOptions(srv))
		reqs[n] = srv.Requests()
		srv.Close()
	}
	if len(reqs[0]) == 0 || len(reqs[0]) != len(reqs[1]) {
		t.Fatalf("requests: %d and %d", len(reqs[0]), len(reqs[1]))
	}
	for i := range reqs[0] {
		a, b := reqs[0][i], reqs[1][i]
		if a.System != b.System || a.User != b.User {
			t.Fatalf("request %d differs:\n%s\n---\n%s", i, a.User, b.User)
		}
	}
	if n := len(reqs[0][0].Items); n < len(cands)+1 {
		t.Fatalf("only %d items: %s", n, reqs[0][0].User)
	}
}

type embedFunc func(ctx context.Context, texts []string) ([][]float32, error)

func (f embedFunc) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return f(ctx, texts)
}

// TestEmbeddingsFindMeaning: with an embedding model, an update that
// shares no word and no topic with its target reaches the model with it
// (the fake embeds "whites" and "tea" as the concept "coffee"); without
// one it does not. Vectors are cached by text: a second run embeds
// nothing again. An embedding endpoint that fails costs only the dense
// ranking.
func TestEmbeddingsFindMeaning(t *testing.T) {
	const text, target = "Has given up coffee altogether and sticks to tea", "Alex drinks oat milk flat whites, no sugar"
	shown := func(srv *fakellm.Server) bool {
		for _, r := range srv.Requests() {
			var c, e bool
			for _, it := range r.Items {
				c = c || it.Kind == "candidate" && it.Text == text
				e = e || it.Kind == "entry" && it.Text == target
			}
			if c && e {
				return true
			}
		}
		return false
	}
	for _, withEmb := range []bool{false, true} {
		dir := importedMemory(t, retrievalMemory(), []*mdmem.Candidate{cand(text, "preference", testNow)})
		srv := fakellm.New([]fakellm.Step{{Auto: "add", Repeat: true}})
		srv.SetConcepts(map[string]string{"whites": "coffee", "tea": "coffee"})
		o := fakeOptions(srv)
		if withEmb {
			o.Embedder, o.EmbeddingModel = NewOpenAIEmbedder(srv.URL+"/v1", "k", "fake-embed"), "fake-embed"
		}
		rep := run(t, dir, o)
		if got := shown(srv); got != withEmb {
			t.Fatalf("embeddings %v: target shown with the candidate: %v (report %+v)", withEmb, got, rep.Summary)
		}
		if !withEmb {
			srv.Close()
			continue
		}
		if rep.EmbeddingModel != "fake-embed" || rep.EmbeddingError != "" {
			t.Fatalf("report: model %q, error %q", rep.EmbeddingModel, rep.EmbeddingError)
		}
		n := len(srv.Embedded())
		if n != len(retrievalMemory())+1 {
			t.Fatalf("%d texts embedded, want %d", n, len(retrievalMemory())+1)
		}
		// The cache holds every text: embedding them again calls nothing.
		texts := []string{text, target}
		if _, err := Embeddings(context.Background(), inject.VectorCache{}, dir, "fake-embed", o.Embedder, texts, true); err != nil || len(srv.Embedded()) != n {
			t.Fatalf("cached texts embedded again: %v, %d calls", err, len(srv.Embedded())-n)
		}
		srv.Close()
		// A failing endpoint: words only, reported, the run goes on.
		dir = importedMemory(t, retrievalMemory(), []*mdmem.Candidate{cand(text, "preference", testNow)})
		srv = fakellm.New([]fakellm.Step{{Auto: "add", Repeat: true}})
		o = fakeOptions(srv)
		o.Embedder, o.EmbeddingModel = embedFunc(func(context.Context, []string) ([][]float32, error) {
			return nil, fmt.Errorf("HTTP 503: down")
		}), "down-embed"
		rep = run(t, dir, o)
		if rep.EmbeddingError == "" || rep.Commit == "" {
			t.Fatalf("failing embeddings: error %q, commit %q", rep.EmbeddingError, rep.Commit)
		}
		srv.Close()
	}
}

// TestOneWordChangeEndToEnd: the one-word change through a whole LLM run:
// it reaches the model with the entry it changes, and a model that answers
// "merge" (no text) is refused: the entry stays, the candidate is held.
func TestOneWordChangeEndToEnd(t *testing.T) {
	gateNew := strings.Replace(gateOld, "main gate", "side gate", 1)
	dir := newRepo(t, memoryWith("- [pref-001] "+gateOld+" (user · 2026-01-05)"), "")
	enqueue(t, dir, cand(gateNew, "preference", testNow))
	srv := fakellm.New([]fakellm.Step{{Ops: []byte(`[{"op": "merge", "target": 1, "sources": [2], "text": "", "category": "", "reason": "same"}]`)}})
	defer srv.Close()
	rep := run(t, dir, fakeOptions(srv))
	if rq := srv.Requests(); len(rq) != 1 || len(rq[0].Items) != 2 || rq[0].Items[0].Text != gateOld || rq[0].Items[1].Text != gateNew {
		t.Fatalf("requests: %+v", rq)
	}
	m, err := mdmem.Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	// The model's merge would replace one value with the other without an
	// archive record: refused, the candidate held for the next run.
	if e := m.Find("pref-001"); e == nil || e.Content != gateOld || e.Place != mdmem.PlaceCore || len(rep.Plan.Held) != 1 {
		t.Fatalf("after %s: %+v", rep.Summary, e)
	}
}
