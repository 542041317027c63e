package inject

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// retrievalFiles is a memory of a few hundred entries in four topic
// files, most sharing words, so rankings are long and ties frequent.
func retrievalFiles() map[string]string {
	files := map[string]string{"MEMORY.md": sampleMain}
	for f, topic := range []string{"db", "ops", "team", "misc"} {
		var b strings.Builder
		b.WriteString("# " + topic + "\n\n")
		for i := range 120 {
			fmt.Fprintf(&b, "- [fact-%03d] The %s service %d listens on port %d for widget %d (agent · 2026-01-%02d)\n", 100+f*120+i, topic, i%7, 8000+i, i%13, 1+i%28)
		}
		files["topics/"+topic+".md"] = b.String()
	}
	return files
}

// TestCachedRetrievalMatchesRetrieval: the ids CachedRetrieval returns
// are those Retrieval returns over the loaded memory, with the index
// cache fresh, stale, missing or corrupt.
func TestCachedRetrievalMatchesRetrieval(t *testing.T) {
	queries := []string{"db service 3 port", "widget 7", "fact-130 listens", "FACT-131", "team 5 port 8010 widget", "nothing matches this"}
	tests := []struct {
		name  string
		cache func(t *testing.T, dir string)
	}{
		{"fresh", func(*testing.T, string) {}},
		{"stale", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "topics", "ops.md")
			if err := os.Chtimes(p, time.Now(), time.Now().Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}},
		{"missing", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(IndexCacheFile))); err != nil {
				t.Fatal(err)
			}
		}},
		{"corrupt", func(t *testing.T, dir string) {
			p := filepath.Join(dir, filepath.FromSlash(IndexCacheFile))
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			for i := len(b) / 2; i < len(b)/2+32; i++ {
				b[i] ^= 0xff
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeMem(t, retrievalFiles())
			if _, err := LoadCorpus(context.Background(), dir, true); err != nil {
				t.Fatal(err)
			}
			tt.cache(t, dir)
			mem, err := mdmem.Load(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			want, got := Retrieval{}.Index(mem), CachedRetrieval{}.Index(mem)
			for _, q := range queries {
				for _, n := range []int{1, 5, 48, 0} {
					if w, g := want(q, n), got(q, n); !slices.Equal(g, w) {
						t.Errorf("%q, %d hits: %v, want %v", q, n, g, w)
					}
				}
			}
		})
	}
}

// TestCachedRetrievalReadsTheCache: with a fresh cache the hits come from
// the cache, not from the entries of the memory given (here changed in
// memory only, so the two differ).
func TestCachedRetrievalReadsTheCache(t *testing.T) {
	dir := writeMem(t, retrievalFiles())
	if _, err := LoadCorpus(context.Background(), dir, true); err != nil {
		t.Fatal(err)
	}
	mem, err := mdmem.Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	mem.Find("fact-100").Content = "A zebra crossing"
	if got := (CachedRetrieval{}).Index(mem)("zebra", 5); len(got) != 0 {
		t.Errorf("zebra: %v from the cache, want nothing (the cache holds the files)", got)
	}
	if got := (Retrieval{}).Index(mem)("zebra", 5); !slices.Equal(got, []string{"fact-100"}) {
		t.Errorf("zebra: %v from the memory, want fact-100", got)
	}
}

func TestMayBeID(t *testing.T) {
	tests := []struct {
		word string
		want bool
	}{
		{"pref-001", true},
		{"PREF-001", true},
		{"dec-kqxzbt", true},
		{"\u212aey-001", true}, // the Kelvin sign folds to k
		{"1-1", false},
		{"widget", false},
		{"fact-", false},
		{"é-001", false},
	}
	for _, tt := range tests {
		if got := mayBeID(tt.word); got != tt.want {
			t.Errorf("mayBeID(%q) = %v, want %v", tt.word, got, tt.want)
		}
	}
}
