package inject

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestIndexCacheRebuilt(t *testing.T) {
	dir := writeMem(t, map[string]string{"MEMORY.md": sampleMain, "topics/db-notes.md": sampleDB})
	ctx := context.Background()
	if _, err := LoadCorpus(ctx, dir, true); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, filepath.FromSlash(IndexCacheFile))
	if _, err := loadCached(ctx, dir); err != nil {
		t.Fatalf("fresh cache unreadable: %v", err)
	}
	full, _ := os.ReadFile(p)
	for name, data := range map[string][]byte{
		"truncated": full[:len(full)/2],
		"corrupt":   append(append([]byte{}, full[:len(full)-10]...), []byte("0123456789")...),
		"empty":     {},
	} {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if c, err := loadCached(ctx, dir); err == nil && c != nil {
			t.Fatalf("%s cache accepted", name)
		}
		c, err := LoadCorpus(ctx, dir, true)
		if err != nil || c.Len() != 11 {
			t.Fatalf("%s: %v %d notes", name, err, c.Len())
		}
		if c, err := loadCached(ctx, dir); err != nil || c == nil {
			t.Fatalf("%s: cache not rewritten: %v", name, err)
		}
	}
	// An edit of the same size is still seen (mtime/ctime change).
	db := filepath.Join(dir, "topics/db-notes.md")
	src, _ := os.ReadFile(db)
	os.WriteFile(db, []byte(strings.Replace(string(src), "MySQL runs 5.7", "MySQL runs 8.0", 1)), 0o644)
	c, _ := LoadCorpus(ctx, dir, true)
	found := false
	for i := 0; i < c.Len(); i++ {
		n := c.Note(i)
		found = found || strings.Contains(n.Content, "MySQL runs 8.0")
	}
	if !found {
		t.Fatal("same-size edit not picked up")
	}
}

func TestEvalRegressionSet(t *testing.T) {
	cases, err := LoadEvalSet("../testdata/eval")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Eval(context.Background(), "testdata/eval", cases, EvalOptions{
		Budgets: []int{300}, TopKs: []int{3}, Rankers: []string{"bm25"}, Counter: o200k(t),
		Base: Options{L2Reserve: 0.25, CoreMaxLines: 200, CoreMaxBytes: 25600},
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Queries != 20 || rep.Memories != 30 {
		t.Fatalf("set has %d queries, %d memories", rep.Queries, rep.Memories)
	}
	for _, r := range rep.Results {
		if r.Recall < 0.95 {
			t.Errorf("%s %s recall %.3f < 0.95", r.Ranker, r.Cut, r.Recall)
		}
	}
}
