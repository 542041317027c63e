package consolidate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/memctl/memctl/mdmem"
)

// TestBoundedLookup: the near-duplicate lookup over the match cache,
// which counts the postings of the rarest shingles only and stops on a
// bound, returns what the in-memory index counting every posting returns
// (the same items, scores and order), on random memories whose words
// follow a skewed distribution (a few words in most entries), for random
// thresholds, k and filters.
func TestBoundedLookup(t *testing.T) {
	ctx := context.Background()
	for seed := range 6 {
		rng := rand.New(rand.NewPCG(uint64(seed), 99))
		// Word w with probability ∝ 1/(w+1): "note", "about" and the like.
		vocab := 40 + rng.IntN(400)
		zipf := rand.NewZipf(rng, 1.1, 1, uint64(vocab-1))
		text := func() string {
			n := 1 + rng.IntN(12)
			w := make([]string, n)
			for i := range w {
				w[i] = word(int(zipf.Uint64()))
			}
			return strings.Join(w, " ")
		}
		dir := newRepo(t, "# Core profile\n\n## Key decisions\n\n## Pending confirmation\n\n# Topic index\n", "")
		if err := os.MkdirAll(filepath.Join(dir, mdmem.TopicDir), 0o755); err != nil {
			t.Fatal(err)
		}
		var texts []string
		id := 0
		for f := range 1 + rng.IntN(6) {
			var b strings.Builder
			fmt.Fprintf(&b, "# Topic %d\n\n", f)
			for range rng.IntN(300) {
				id++
				s := text()
				texts = append(texts, s)
				cat := []string{"fact", "note", "lesson"}[rng.IntN(3)]
				fmt.Fprintf(&b, "- [%s] %s (user · 2025-01-01)\n", mdmem.FormatID(cat, id), s)
			}
			if err := os.WriteFile(filepath.Join(dir, mdmem.TopicPath(fmt.Sprintf("t%d", f))), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		buildMatchCache(t, dir)
		mem, err := mdmem.Load(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		full := newIndex(0)
		for r, d := range mem.Docs() {
			n := 0
			for _, e := range d.Entries {
				it := newItem(e.Content, e.Category, e.Scope)
				it.entry = e
				full.addEntry(it, ordOf(r, n))
				n++
			}
		}
		mb, _, ok, err := openMatchBase(ctx, dir)
		if err != nil || !ok {
			t.Fatal(ok, err)
		}
		defer mb.close()
		for range 200 {
			q := newItem(text(), "fact", nil)
			if len(texts) > 0 && rng.IntN(2) == 0 {
				// Near an entry: a word changed, added or dropped.
				w := strings.Fields(texts[rng.IntN(len(texts))])
				w[rng.IntN(len(w))] = word(int(zipf.Uint64()))
				q = newItem(strings.Join(w, " "), "fact", nil)
			}
			min := []float64{0, 0.05, 0.15, 0.3, 0.6}[rng.IntN(5)]
			k := 1 + rng.IntN(12)
			drop := rng.IntN(4) // refuse ids ≡ 0 mod drop (none when 0)
			cat := []string{"", "fact", "note"}[rng.IntN(3)]
			okFn := func(it *item) bool {
				_, n, _ := mdmem.SplitID(it.entry.ID)
				return (drop == 0 || n%drop != 0) && (cat == "" || it.cat == cat)
			}
			pre := func(c, _ string, _ mdmem.Place) bool { return cat == "" || c == cat }
			wantI, wantJ := full.best(q, min, k, okFn, nil)
			x := newIndex(0)
			x.base = newPlanBase(ctx, mb, func(*item) {})
			gotI, gotJ := x.best(q, min, k, okFn, pre)
			if x.base.err != nil {
				t.Fatal(x.base.err)
			}
			if got, want := lookupString(gotI, gotJ), lookupString(wantI, wantJ); got != want {
				t.Fatalf("seed %d: best(%q, min %.2f, k %d, drop %d, cat %q):\ngot  %s\nwant %s", seed, q.text, min, k, drop, cat, got, want)
			}
		}
	}
}

func lookupString(its []*item, js []float64) string {
	var b strings.Builder
	for i, it := range its {
		fmt.Fprintf(&b, "%s:%.4f ", it.entry.ID, js[i])
	}
	return b.String()
}

// TestMatchCacheEntryChangedDuringRun: an entry read alone whose bytes
// changed since the cache was checked (a hand edit during the run) does
// not match its fingerprint, nor does a file parsed to be written whose
// other entries changed: the plan is refused (errMatchCache), the run
// plans again on every file.
func TestMatchCacheEntryChangedDuringRun(t *testing.T) {
	ctx := context.Background()
	dir := newRepo(t, "# Core profile\n\n## Key decisions\n\n## Pending confirmation\n\n# Topic index\n", "")
	if err := os.MkdirAll(filepath.Join(dir, mdmem.TopicDir), 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, mdmem.TopicPath("db"))
	src := "# Db\n\n- [fact-001] The primary database listens on port 5432 (user · 2025-01-01)\n- [fact-002] Backups run nightly at two (user · 2025-01-01)\n"
	for _, tt := range []struct {
		name   string
		change string
		ok     bool // the entry is read alone
		parsed bool // its file, parsed to be written, is what the cache says
	}{
		{"unchanged", src, true, true},
		{"same length, other words", strings.Replace(src, "port 5432", "port 6543", 1), false, false},
		{"a line inserted before", strings.Replace(src, "# Db\n\n", "# Db\n\n- [fact-003] New (user · 2025-01-01)\n", 1), false, false},
		{"another entry of the file changed", strings.Replace(src, "at two", "at one", 1), true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
			buildMatchCache(t, dir)
			mb, _, ok, err := openMatchBase(ctx, dir)
			if err != nil || !ok {
				t.Fatal(ok, err)
			}
			defer mb.close()
			// The cache was checked fresh; the file changes now, keeping
			// its times so that nothing but the bytes tell.
			fi, _ := os.Stat(p)
			if err := os.WriteFile(p, []byte(tt.change), 0o644); err != nil {
				t.Fatal(err)
			}
			_ = os.Chtimes(p, fi.ModTime(), fi.ModTime())
			b := newPlanBase(ctx, mb, func(*item) {})
			s, i := mb.findID("fact-001")
			it := b.materialize(s.base + i)
			if got := it != nil && b.err == nil; got != tt.ok {
				t.Fatalf("materialized %v (err %v), want %v", got, b.err, tt.ok)
			}
			if tt.ok {
				if it.entry.Content != "The primary database listens on port 5432" || mb.mem.Topics["db"] != nil {
					t.Errorf("entry %q, file parsed %v: want the entry read alone", it.entry.Content, mb.mem.Topics["db"] != nil)
				}
				e, err := b.parsed(it.entry)
				switch {
				case !tt.parsed && !errors.Is(err, errMatchCache):
					t.Errorf("parsed: %v, want errMatchCache", err)
				case tt.parsed && (err != nil || e.Raw != it.entry.Raw || e.Start != it.entry.Start || mb.mem.Topics["db"] == nil):
					t.Errorf("parsed: %v, %v", e, err)
				}
			}
		})
	}
}

// TestMatchCacheEntryWithoutWords: a file holding an entry whose text has
// no words (no shingles, not in the exact-text table) still has a usable
// segment.
func TestMatchCacheEntryWithoutWords(t *testing.T) {
	dir := newRepo(t, "# Core profile\n\n## Key decisions\n\n## Pending confirmation\n\n# Topic index\n", "")
	if err := os.MkdirAll(filepath.Join(dir, mdmem.TopicDir), 0o755); err != nil {
		t.Fatal(err)
	}
	src := "# Db\n\n- [fact-001] !! (user · 2025-01-01)\n- [fact-002] Backups run nightly at two (user · 2025-01-01)\n"
	if err := os.WriteFile(filepath.Join(dir, mdmem.TopicPath("db")), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	buildMatchCache(t, dir)
	s := openSegment(dir, "db")
	if s == nil {
		t.Fatal("the segment is not usable")
	}
	defer s.close()
	if s.nItems != 2 || s.nNorms != 1 {
		t.Errorf("%d items, %d with words; want 2, 1", s.nItems, s.nNorms)
	}
}

// TestSegmentReadsItsFile: a segment is read from its file a block at a
// time; a read within a block, across blocks or to the end returns the
// file's bytes, and one past the end or from a file that cannot be read
// returns zeros and sets the error that refuses the plan.
func TestSegmentReadsItsFile(t *testing.T) {
	dir := newRepo(t, "# Core profile\n\n## Key decisions\n\n## Pending confirmation\n\n# Topic index\n", "")
	if err := os.MkdirAll(filepath.Join(dir, mdmem.TopicDir), 0o755); err != nil {
		t.Fatal(err)
	}
	var src strings.Builder
	src.WriteString("# Db\n\n")
	for i := 1; i <= 300; i++ {
		fmt.Fprintf(&src, "- [fact-%03d] Backup %d of the database runs at %d (user · 2025-01-01)\n", i, i, i%24)
	}
	if err := os.WriteFile(filepath.Join(dir, mdmem.TopicPath("db")), []byte(src.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	buildMatchCache(t, dir)
	file, err := os.ReadFile(segPath(dir, "db"))
	if err != nil || len(file) < 3*blockSize {
		t.Fatalf("segment of %d bytes (%v), want more than 3 blocks", len(file), err)
	}
	tests := []struct {
		name   string
		o, n   int
		closed bool
		fails  bool
	}{
		{name: "within a block", o: 100, n: 64},
		{name: "across a block boundary", o: blockSize - 10, n: 64},
		{name: "across three blocks", o: blockSize - 1, n: blockSize + 2},
		{name: "to the end", o: len(file) - 8, n: 8},
		{name: "past the end", o: len(file) - 4, n: 8, fails: true},
		{name: "a file that cannot be read", o: 2*blockSize + 1, n: 8, closed: true, fails: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openSegment(dir, "db")
			if s == nil {
				t.Fatal("the segment is not usable")
			}
			defer s.close()
			if tt.closed {
				s.f.Close()
			}
			got := s.at(tt.o, tt.n)
			want := make([]byte, tt.n)
			if !tt.fails {
				want = file[tt.o : tt.o+tt.n]
			}
			if !bytes.Equal(got, want) {
				t.Errorf("at(%d, %d) = %x, want %x", tt.o, tt.n, got, want)
			}
			if (s.err != nil) != tt.fails || tt.fails && !errors.Is(s.err, errMatchCache) {
				t.Errorf("err = %v, want failed %v (errMatchCache)", s.err, tt.fails)
			}
		})
	}
}
