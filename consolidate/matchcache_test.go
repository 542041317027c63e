package consolidate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/consolidate/fakellm"
	"github.com/memctl/memctl/inject"
	"github.com/memctl/memctl/mdmem"
)

// buildMatchCache writes the match cache of every topic file of dir.
func buildMatchCache(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	mem, err := mdmem.Load(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range mem.Topics {
		if err := writeSegment(ctx, dir, d, time.Now().Add(-time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
}

// addMiscTopics adds topic files no candidate of generatedMemory is near:
// a run with a fresh match cache does not read them.
func addMiscTopics(t *testing.T, base string) {
	t.Helper()
	for i, slug := range []string{"misc-a", "misc-b", "misc-c", "misc-d"} {
		var b strings.Builder
		fmt.Fprintf(&b, "# Misc %d\n\n", i)
		for k := range 20 {
			fmt.Fprintf(&b, "- [fact-%d] Crocus bulb %s %d sprouts in loamy soil (user_explicit · 2025-05-01)\n", 2000+20*i+k, slug, k)
		}
		if err := os.WriteFile(filepath.Join(base, mdmem.TopicPath(slug)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git(t, base, "add", "-A")
	git(t, base, "commit", "-qm", "misc topics")
}

// TestMatchCacheSameCommit: a rules-only run that reads the memory in
// part through the match cache makes the same commit as one that reads
// every file (--full), whatever the state of the cache: fresh, stale (a
// file rewritten with the same bytes, and a file edited), missing,
// corrupt, half written, or a hand edit in a file the run does not
// otherwise touch.
func TestMatchCacheSameCommit(t *testing.T) {
	base := generatedMemory(t)
	addMiscTopics(t, base)
	// The neighbours come from inject's index cache, as cmd wires them:
	// a run that reads the memory in part ranks the whole memory so.
	if _, err := inject.LoadCorpus(context.Background(), base, true); err != nil {
		t.Fatal(err)
	}
	seg := func(dir, slug string) string { return segPath(dir, slug) }
	rewrite := func(dir, slug string, f func([]byte) []byte) {
		p := seg(dir, slug)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	appendTo := func(dir, slug, line string) {
		f, err := os.OpenFile(filepath.Join(dir, mdmem.TopicPath(slug)), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(line); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		cache func(dir string)
	}{
		{"fresh", func(string) {}},
		{"stale", func(dir string) {
			p := filepath.Join(dir, mdmem.TopicPath("ops-egret"))
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			appendTo(dir, "ops-marten", "- [fact-901] Backups of the marten database 30 are kept for 44 days (user_explicit · 2025-07-01)\n")
		}},
		{"missing", func(dir string) {
			if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(MatchCacheDir))); err != nil {
				t.Fatal(err)
			}
		}},
		{"corrupt", func(dir string) {
			for _, slug := range []string{"ops-egret", "ops-marten", "ops-jackal"} {
				rewrite(dir, slug, func(b []byte) []byte {
					for i := len(b) / 3; i < len(b)/3+64; i++ {
						b[i] ^= 0x5a
					}
					return b
				})
			}
		}},
		{"half written", func(dir string) {
			for _, slug := range []string{"ops-egret", "ops-marten", "ops-otter"} {
				rewrite(dir, slug, func(b []byte) []byte { return b[:len(b)/2] })
			}
		}},
		{"no index cache for the neighbours' ranking", func(dir string) {
			// The run reads every file: its neighbours are ranked over
			// the whole memory.
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(inject.IndexCacheFile))); err != nil {
				t.Fatal(err)
			}
		}},
		{"a hand edit in an untouched file", func(dir string) {
			appendTo(dir, "ops-lynx", "- [fact-900] The lynx cache warms up in ninety seconds (user_explicit · 2025-07-01)\n")
		}},
		{"a hand edit in a file nothing else reads", func(dir string) {
			appendTo(dir, "misc-c", "- [fact-2100] Crocus bulbs sprout in loamy soil after the frost (user_explicit · 2025-07-01)\n")
		}},
		{"a file changed keeping its size and times", func(dir string) {
			// The same size and modification time: only the content hash
			// of a file changed near the cache's build tells.
			p := filepath.Join(dir, mdmem.TopicPath("ops-marten"))
			fi, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			copy(b[len(b)-20:], "kept for 99 days (us")
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Chtimes(p, fi.ModTime(), fi.ModTime()); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A copy has new inodes: its cache is built there.
			wantDir := copyDir(t, base)
			buildMatchCache(t, wantDir)
			tt.cache(wantDir)
			wantRep := run(t, wantDir, Options{NoLLM: true, Full: true, Retrieval: inject.CachedRetrieval{}})
			dir := copyDir(t, base)
			buildMatchCache(t, dir)
			tt.cache(dir)
			rep := run(t, dir, Options{NoLLM: true, Retrieval: inject.CachedRetrieval{}})
			if got, want := head(t, dir), head(t, wantDir); got != want {
				t.Errorf("commit %s, want %s (as reading every file)\ngot:  %s\nwant: %s", got, want, formatOps(rep.Plan), formatOps(wantRep.Plan))
			}
			t.Logf("read %d of %d files", rep.FilesRead, rep.FilesTotal)
			if tt.name == "fresh" && rep.FilesRead > rep.FilesTotal-4 {
				t.Errorf("read %d of %d files with a fresh cache", rep.FilesRead, rep.FilesTotal)
			}
			if wantRep.Summary.Added == len(wantRep.Plan.Consumed) {
				t.Errorf("every candidate added (%v): the memory does not exercise the lookups", wantRep.Summary)
			}
		})
	}
}

// TestMatchCacheSameLLMRun: a run with a model (no embedding model) that
// reads the memory in part through the match cache asks the model the
// same (the same prompts, neighbours included) and makes the same commit
// as one that reads every file.
func TestMatchCacheSameLLMRun(t *testing.T) {
	base := generatedMemory(t)
	addMiscTopics(t, base)
	if _, err := inject.LoadCorpus(context.Background(), base, true); err != nil {
		t.Fatal(err)
	}
	runLLM := func(full bool) (string, []fakellm.Request, *Report) {
		dir := copyDir(t, base)
		buildMatchCache(t, dir)
		srv := fakellm.New([]fakellm.Step{{Auto: "add", Repeat: true}})
		defer srv.Close()
		o := fakeOptions(srv)
		o.Full, o.Retrieval = full, inject.CachedRetrieval{}
		rep := run(t, dir, o)
		return head(t, dir), srv.Requests(), rep
	}
	wantHead, wantReqs, wantRep := runLLM(true)
	gotHead, gotReqs, rep := runLLM(false)
	if len(wantReqs) == 0 {
		t.Fatal("the model was not asked: the memory does not exercise the LLM stage")
	}
	if len(gotReqs) != len(wantReqs) {
		t.Fatalf("%d requests, want %d", len(gotReqs), len(wantReqs))
	}
	for i := range wantReqs {
		if gotReqs[i].System != wantReqs[i].System || gotReqs[i].User != wantReqs[i].User {
			t.Errorf("request %d differs:\ngot:  %s\nwant: %s", i, gotReqs[i].User, wantReqs[i].User)
		}
	}
	if gotHead != wantHead {
		t.Errorf("commit %s, want %s (as reading every file)\ngot:  %s\nwant: %s", gotHead, wantHead, formatOps(rep.Plan), formatOps(wantRep.Plan))
	}
	t.Logf("read %d of %d files, %d requests", rep.FilesRead, rep.FilesTotal, len(gotReqs))
	if rep.FilesRead > rep.FilesTotal-4 {
		t.Errorf("read %d of %d files with a fresh cache", rep.FilesRead, rep.FilesTotal)
	}
}
