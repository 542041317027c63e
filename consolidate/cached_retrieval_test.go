package consolidate

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/inject"
	"github.com/memctl/memctl/mdmem"
)

// generatedMemory is a memory of several hundred facts in eight topic
// files, each fact a statement of a thing with a value, and candidates
// that restate, update or reword facts of every file: exact and near
// duplicates, new values, rewordings, and new facts.
func generatedMemory(t *testing.T) string {
	t.Helper()
	old := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	things := []string{"jackal", "egret", "otter", "heron", "badger", "lynx", "marten", "ibis"}
	var es []*mdmem.Candidate
	for i := range 480 {
		thing := things[i%len(things)]
		topic := "ops-" + thing
		var text string
		switch i % 3 {
		case 0:
			text = fmt.Sprintf("Backups of the %s database %d are kept for %d days", thing, i, 7+i%50)
		case 1:
			text = fmt.Sprintf("The %s service %d listens on port %d behind the gateway", thing, i, 8000+i)
		default:
			text = fmt.Sprintf("Reports of team %s %d go out every %s morning", thing, i, []string{"Monday", "Tuesday", "Friday"}[i%3])
		}
		es = append(es, topicCand(text, "fact", topic, old))
	}
	now := testNow.Add(-time.Hour)
	cands := []*mdmem.Candidate{
		topicCand("Backups of the jackal database 0 are kept for 7 days", "fact", "ops-jackal", now),              // exact duplicate
		topicCand("backups of the egret database 9 are kept for 16 days.", "fact", "ops-egret", now),              // near duplicate
		topicCand("Backups of the otter database 18 are kept for 30 days", "fact", "ops-otter", now),              // a new value
		topicCand("The heron service 19 listens on port 9019 behind the gateway", "fact", "ops-heron", now),       // a number after an identifier
		topicCand("Team badger 20 now sends its reports every Thursday morning", "fact", "ops-badger", now),       // a rewording
		topicCand("The lynx cache warms up in ninety seconds after a deploy", "fact", "ops-lynx", now),            // new
		topicCand("Backups of the marten database 30 are kept for 45 days", "fact", "", now),                      // its neighbour's file is not named
		topicCand("Reports of team ibis 23 go out every Friday morning and on holidays", "fact", "ops-ibis", now), // adds a detail
	}
	return importedMemory(t, es, cands)
}

// copyDir copies a memory directory, .git included.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "m")
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	return dst
}

// TestCachedRetrievalSameCommit: a run whose neighbours come from inject's
// index cache makes the same commit as one that indexes every entry in
// memory, whatever the state of the cache: fresh, stale (a file rewritten
// with the same bytes, and a file edited), missing or corrupt.
func TestCachedRetrievalSameCommit(t *testing.T) {
	ctx := context.Background()
	base := generatedMemory(t)
	if _, err := inject.LoadCorpus(ctx, base, true); err != nil { // builds the cache
		t.Fatal(err)
	}
	cacheFile := filepath.Join(filepath.FromSlash(inject.IndexCacheFile))
	want := func(edit func(dir string)) (string, *Report) {
		dir := copyDir(t, base)
		edit(dir)
		rep := run(t, dir, Options{NoLLM: true, Retrieval: inject.Retrieval{}})
		return head(t, dir), rep
	}
	touch := func(dir string) {
		p := filepath.Join(dir, mdmem.TopicPath("ops-egret"))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, time.Now(), time.Now().Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		cache func(dir string)
	}{
		{"fresh", func(string) {}},
		{"stale", touch},
		{"missing", func(dir string) {
			if err := os.Remove(filepath.Join(dir, cacheFile)); err != nil {
				t.Fatal(err)
			}
		}},
		{"corrupt", func(dir string) {
			p := filepath.Join(dir, cacheFile)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for i := len(b) / 3; i < len(b)/3+64; i++ {
				b[i] ^= 0x5a
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
		{"a hand edit since", func(dir string) {
			p := filepath.Join(dir, mdmem.TopicPath("ops-lynx"))
			f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString("- [fact-900] The lynx cache warms up in ninety seconds (user_explicit · 2025-07-01)\n"); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantHead, wantRep := want(tt.cache)
			dir := copyDir(t, base)
			tt.cache(dir)
			rep := run(t, dir, Options{NoLLM: true, Retrieval: inject.CachedRetrieval{}})
			if got := head(t, dir); got != wantHead {
				t.Errorf("commit %s, want %s (as without the cache)\ngot:  %s\nwant: %s", got, wantHead, formatOps(rep.Plan), formatOps(wantRep.Plan))
			}
			if wantRep.Summary.Added == len(wantRep.Plan.Consumed) {
				t.Errorf("every candidate added (%v): the memory does not exercise the neighbours", wantRep.Summary)
			}
		})
	}
}

// formatOps renders a plan's operations, one per line (test output).
func formatOps(p *Plan) string {
	var s string
	for _, o := range p.Ops {
		s += "\n  " + FormatOp(o)
	}
	return s
}

// TestCachedRetrievalSameNeighbours: what the model is shown with each
// candidate (Triage's clusters) is the same with the cache as without.
func TestCachedRetrievalSameNeighbours(t *testing.T) {
	ctx := context.Background()
	dir := generatedMemory(t)
	if _, err := inject.LoadCorpus(ctx, dir, true); err != nil {
		t.Fatal(err)
	}
	s := open(t, dir)
	mem, err := s.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cands, _, err := mdmem.ReadQueue(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	clusters := func(r Retrieval) [][]string {
		in := &Input{Mem: mem, Cands: cands, Config: s.Config, Now: testNow, Retrieval: r, Measure: inject.CoreMeasure{}}
		var out [][]string
		for _, c := range Triage(in) {
			var ids []string
			for _, x := range c.Cands {
				ids = append(ids, x.ID)
			}
			for _, e := range c.Entries {
				ids = append(ids, e.ID)
			}
			out = append(out, ids)
		}
		return out
	}
	want, got := clusters(inject.Retrieval{}), clusters(inject.CachedRetrieval{})
	if len(want) == 0 {
		t.Fatal("no candidate for the model: the memory does not exercise the neighbours")
	}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("clusters with the cache:\n%v\nwithout:\n%v", got, want)
	}
}

// TestNeighbourInAnotherFile: a candidate filed under no topic whose
// neighbour lives in a topic file nothing else touches updates that entry
// there: the old value is archived, superseded by the new one.
func TestNeighbourInAnotherFile(t *testing.T) {
	dir := generatedMemory(t)
	if _, err := inject.LoadCorpus(context.Background(), dir, true); err != nil {
		t.Fatal(err)
	}
	before := readFile(t, dir, mdmem.TopicPath("ops-marten"))
	rep := run(t, dir, Options{NoLLM: true, Retrieval: inject.CachedRetrieval{}})
	var op *Op
	for i, o := range rep.Plan.Ops {
		if o.Kind == OpSupersede && len(o.Targets) == 1 && o.Text == "Backups of the marten database 30 are kept for 45 days" {
			op = &rep.Plan.Ops[i]
		}
	}
	if op == nil {
		t.Fatalf("no supersede of the marten entry:%s", formatOps(rep.Plan))
	}
	after := readFile(t, dir, mdmem.TopicPath("ops-marten"))
	if after == before || !strings.Contains(readFile(t, dir, "MEMORY.md"), "["+op.Targets[0]+"]") {
		t.Errorf("%s: ops-marten.md unchanged or %s not in the archive", FormatOp(*op), op.Targets[0])
	}
}
