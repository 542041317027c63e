package inject

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"
)

// lazyFiles is randomFiles with the fields that filter retrieval set on
// some topic entries: tags, expiry, superseded, a scope, and ids written
// twice; plus pending and archived entries.
func lazyFiles(rng *rand.Rand, n, m int) map[string]string {
	files := randomFiles(rng, n, m)
	extra := []string{
		"- [fact-0001] duplicate id order cache redis (session · 2025-03-01 · tags cache, redis)\n",
		"- [fact-901] tagged report api slow (session · 2025-04-02 · tags api)\n",
		"- [fact-902] expired kafka deploy order (session · 2025-05-03 · expires 2026-01-01)\n",
		"- [fact-903] replaced redis cache order (session · 2025-06-04 · superseded by fact-901 on 2025-07-01)\n",
		"- [fact-904] scoped mysql slow index (session · 2025-07-05 · scope p1 · tags db)\n",
	}
	for f := 0; f < 3; f++ {
		p := fmt.Sprintf("topics/t%d.md", f)
		for k := 0; k < 4; k++ {
			files[p] += extra[rng.Intn(len(extra))]
		}
	}
	files["MEMORY.md"] = strings.Replace(files["MEMORY.md"], "## Pending confirmation\n\n",
		"## Pending confirmation\n\n- [dec-900] pending order cache (session · 2025-02-02)\n\n", 1) +
		"\n- [dec-901] archived redis report (session · 2024-01-01)\n"
	return files
}

// lazyQueries: inject options and search queries the equivalence tests run.
func lazyInjects(t *testing.T, rng *rand.Rand, k int) []Options {
	var out []Options
	for i := 0; i < k; i++ {
		o := baseOpts(t)
		o.Budget = []int{60, 150, 400, 800, 2000, 100000}[rng.Intn(6)]
		o.TopK = rng.Intn(3) * 6
		o.L2Reserve = rng.Float64()
		o.CoreMaxTokens = []int{0, 100}[rng.Intn(2)]
		o.StaleDays = []int{0, 30, 400}[rng.Intn(3)]
		o.Task = []string{"order cache redis slow report 缓存", "kafka deploy in June 2025", "", "mysql index slow", "fact-901 api"}[rng.Intn(5)]
		o.Tags = [][]string{nil, nil, {"api"}, {"redis", "db"}}[rng.Intn(4)]
		o.Scopes = [][]string{nil, {"all"}, {"p1"}}[rng.Intn(3)]
		o.Ranker = []string{"", "", "bm25-plain"}[rng.Intn(3)]
		out = append(out, o)
	}
	return out
}

// sameOutput compares inject and search on two corpora.
func sameOutput(t *testing.T, name string, got, want *Corpus, opts []Options) {
	t.Helper()
	for _, o := range opts {
		a, err1 := Inject(got, o)
		b, err2 := Inject(want, o)
		if fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Fatalf("%s: errors %v, %v", name, err1, err2)
		}
		if err1 != nil {
			continue
		}
		ja, err := json.Marshal(a.JSON())
		if err != nil {
			t.Fatal(err)
		}
		jb, err := json.Marshal(b.JSON())
		if err != nil {
			t.Fatal(err)
		}
		if a.Block != b.Block || string(ja) != string(jb) || fmt.Sprint(a.Warnings) != fmt.Sprint(b.Warnings) {
			t.Fatalf("%s: inject %q budget %d tags %v scopes %v differs:\n%s\n%s\n---\n%s\n%s", name, o.Task, o.Budget, o.Tags, o.Scopes, a.Block, ja, b.Block, jb)
		}
	}
	for _, q := range []string{"order cache", "fact-901 kafka", "DEC-002 redis 缓存", "nothing-matches"} {
		for _, scopes := range [][]string{nil, {"p0"}} {
			a, b := Search(got, q, scopes, 20), Search(want, q, scopes, 20)
			if fmt.Sprintf("%+v", a) != fmt.Sprintf("%+v", b) {
				t.Fatalf("%s: search %q differs:\n%+v\n%+v", name, q, a, b)
			}
		}
	}
}

// TestLazyCacheSameOutput: inject and search on a corpus read in place
// from the cache print exactly what they print on the corpus parsed from
// the Markdown, and the cached corpus decodes only the notes it shows.
func TestLazyCacheSameOutput(t *testing.T) {
	t.Parallel() // long: runs beside the package's other tests
	rng := rand.New(rand.NewSource(11))
	ctx := context.Background()
	for round := 0; round < 4; round++ {
		dir := writeMem(t, lazyFiles(rng, 5+rng.Intn(30), 40+rng.Intn(150)))
		if _, err := LoadCorpusFor(ctx, dir, true, o200k(t)); err != nil {
			t.Fatal(err)
		}
		opts := lazyInjects(t, rng, 30)
		for _, o := range opts {
			cached, err := loadCached(ctx, dir)
			if err != nil || cached == nil || cached.lz == nil {
				t.Fatalf("cache not read in place: %v", err)
			}
			plain, err := LoadCorpus(ctx, dir, false)
			if err != nil {
				t.Fatal(err)
			}
			sameOutput(t, fmt.Sprint("round ", round), cached, plain, []Options{o})
		}
	}
}

// TestLazyCacheDecodesLittle: an inject on a cached memory of 6,000
// topic entries decodes the core, the entries it shows, the few the
// ranking reads the text of (feedback, proximity) and those with a
// scope, an expiry or a successor, not the rest.
func TestLazyCacheDecodesLittle(t *testing.T) {
	rng := rand.New(rand.NewSource(13))
	ctx := context.Background()
	dir := writeMem(t, lazyFiles(rng, 20, 2000))
	if _, err := LoadCorpusFor(ctx, dir, true, o200k(t)); err != nil {
		t.Fatal(err)
	}
	c, err := loadCached(ctx, dir)
	if err != nil || c == nil {
		t.Fatal(err)
	}
	o := baseOpts(t)
	o.Task = "order cache redis slow report"
	r, err := Inject(c, o)
	if err != nil || len(r.Items) < 8 {
		t.Fatalf("%v, %d items", err, len(r.Items))
	}
	// Notes with a scope, an expiry or a successor are decoded to check
	// them (a fifth of these).
	filtered := 0
	for i := 0; i < c.Len(); i++ {
		if c.flags(i)&(nfScope|nfExpires|nfSuperseded) != 0 {
			filtered++
		}
	}
	if n := decoded(c); n > 300+filtered {
		t.Errorf("inject decoded %d of %d notes (%d filtered)", n, c.Len(), filtered)
	}
}

// TestCorruptCache: a segment file cut short, with a byte flipped in any
// section (those checked on opening and those checked on first use:
// postings, note records, ids), of another version or empty never stops
// inject or search and never changes their output; it is rebuilt.
func TestCorruptCache(t *testing.T) {
	t.Parallel() // long: runs beside the package's other tests
	rng := rand.New(rand.NewSource(12))
	ctx := context.Background()
	dir := writeMem(t, lazyFiles(rng, 20, 120))
	plain, err := LoadCorpus(ctx, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCorpusFor(ctx, dir, true, o200k(t)); err != nil {
		t.Fatal(err)
	}
	segPath := func() string { return filepath.Join(segmentDir(dir), readManifest(dir).segs[0].Name) }
	p := segPath()
	good, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := openSegment(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	secOff := func(s int) int { return int(uintptr(unsafeOffset(cf.b, cf.sec[s]))) }
	opts := lazyInjects(t, rng, 12)
	for _, o := range opts {
		o.Ranker = "" // the default ranker reads the cached index
	}
	// (cf maps the file the cases overwrite.)
	firstPath := filepath.Join(t.TempDir(), "first.seg")
	if err := os.WriteFile(firstPath, good, 0o600); err != nil {
		t.Fatal(err)
	}
	first, err := openSegment(ctx, firstPath)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string][]byte{
		"empty":     {},
		"truncated": good[:len(good)/2],
		"header":    good[:cacheHeader-1],
		"version":   append([]byte("memctl-index-v4\n"), good[16:]...),
		"directory": flip(good, len(good)-10),
		// What a crash can leave of a file renamed into place without
		// fsync (writeCacheAtomic): its length, with blocks never written.
		"zeros":       make([]byte, len(good)),
		"zeroed tail": append(append([]byte(nil), good[:len(good)/2]...), make([]byte, len(good)-len(good)/2)...),
		"zeroed block": func() []byte {
			b := append([]byte(nil), good...)
			clear(b[len(b)/3 : len(b)/3+min(4096, len(b)/3)])
			return b
		}(),
	}
	for s := 0; s < nSecs; s++ {
		if len(cf.sec[s]) > 0 {
			cases[fmt.Sprint("section ", s)] = flip(good, secOff(s)+rng.Intn(len(cf.sec[s])))
		}
	}
	// Every record and every term's postings, so that the queries read a
	// corrupt one.
	all := append([]byte(nil), good...)
	for _, s := range []int{secRecs, secPost, secIDs} {
		for k := secOff(s); k < secOff(s)+len(cf.sec[s]); k += 7 {
			all[k] ^= 0x55
		}
	}
	cases["every record and posting"] = all
	caughtOnOpen := map[string]bool{"empty": true, "truncated": true, "header": true, "version": true, "directory": true,
		"zeros": true, "zeroed tail": true}
	for name, data := range cases {
		p = segPath()
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadCorpusFor(ctx, dir, true, o200k(t))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sameOutput(t, name, c, plain, opts)
		if _, err := LoadCorpusFor(ctx, dir, true, o200k(t)); err != nil {
			t.Fatal(err)
		}
		if c, err := loadCached(ctx, dir); err != nil || c == nil {
			t.Fatalf("%s: cache not rebuilt (%v)", name, err)
		}
		if !caughtOnOpen[name] {
			continue // a corrupt part the queries did not read is still there
		}
		// The rebuilt file is the one first built (but for its key,
		// whose content hashes depend on when it was built).
		re, err := openSegment(ctx, segPath())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for s := range re.sec {
			if s != secKey && !bytes.Equal(re.sec[s], first.sec[s]) {
				t.Fatalf("%s: section %d of the rebuilt cache differs", name, s)
			}
		}
	}
}

// TestLazyDates: dates read from the columns are the notes' dates,
// including none.
func TestLazyDates(t *testing.T) {
	if !unixTime(time.Time{}.Unix(), 0).IsZero() {
		t.Fatal("zero time not zero")
	}
	d := time.Date(2025, 6, 1, 10, 30, 0, 5, time.UTC)
	if got := unixTime(d.Unix(), uint32(d.Nanosecond())); !got.Equal(d) || got.Location() != time.UTC {
		t.Fatalf("%v, want %v", got, d)
	}
}

func flip(b []byte, at int) []byte {
	out := append([]byte(nil), b...)
	out[at] ^= 0x41
	return out
}

// unsafeOffset is the offset of sub in b.
func unsafeOffset(b, sub []byte) uintptr {
	return uintptr(unsafe.Pointer(&sub[0])) - uintptr(unsafe.Pointer(&b[0]))
}

// TestIncrementalUpdate: after edits (a line changed, an entry added and
// one removed, front matter changed, a topic file added and one removed,
// MEMORY.md edited), the cache is read in place with the changed files'
// segments rewritten, its index equals a rebuild's, and inject and search
// print what they print on the Markdown.
func TestIncrementalUpdate(t *testing.T) {
	t.Parallel() // long: runs beside the package's other tests
	rng := rand.New(rand.NewSource(14))
	ctx := context.Background()
	dir := writeMem(t, lazyFiles(rng, 15, 100))
	cnt := o200k(t)
	if _, err := LoadCorpusFor(ctx, dir, true, cnt); err != nil {
		t.Fatal(err)
	}
	path := func(rel string) string { return filepath.Join(dir, filepath.FromSlash(rel)) }
	edit := func(rel string, f func(string) string) {
		b, _ := os.ReadFile(path(rel))
		if err := os.WriteFile(path(rel), []byte(f(string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lines := func(rel string) []string { b, _ := os.ReadFile(path(rel)); return strings.SplitAfter(string(b), "\n") }
	steps := []struct {
		name string
		do   func()
	}{
		{"one line", func() {
			l := lines("topics/t1.md")
			l[5] = "- [fact-1777] kafka deploy order slow report (session · 2025-08-09)\n"
			os.WriteFile(path("topics/t1.md"), []byte(strings.Join(l, "")), 0o644)
		}},
		{"entry removed", func() {
			l := lines("topics/t0.md")
			os.WriteFile(path("topics/t0.md"), []byte(strings.Join(append(l[:4:4], l[6:]...), "")), 0o644)
		}},
		{"entries added", func() {
			edit("topics/t2.md", func(s string) string {
				return s + "- [fact-2901] brand new redis timeout word zebra (session · 2025-09-01 · tags zebra)\n- unnamed hand note about zebra\n"
			})
		}},
		{"front matter", func() {
			edit("topics/t1.md", func(s string) string {
				return "---\ndescription: kafka zebra notes\nkeywords: [alpha, beta]\n---\n" + s
			})
		}},
		{"topic added", func() {
			os.WriteFile(path("topics/a-new.md"), []byte("# New\n\n- [fact-3001] zebra order cache (session · 2025-10-01)\n- [fact-0001] an id written twice\n"), 0o644)
		}},
		{"topic removed", func() { os.Remove(path("topics/t0.md")) }},
		{"core edited", func() {
			edit("MEMORY.md", func(s string) string {
				return strings.Replace(s, "## Key decisions\n\n", "## Key decisions\n\n- [dec-777] zebra redis always (user · 2025-11-01)\n", 1)
			})
		}},
		{"emptied", func() { os.WriteFile(path("topics/t2.md"), nil, 0o644) }},
	}
	for _, st := range steps {
		st.do()
		c, err := LoadCorpusFor(ctx, dir, true, cnt)
		if err != nil {
			t.Fatal(err)
		}
		if c.lz == nil {
			t.Fatalf("%s: cache rebuilt, not updated", st.name)
		}
		plain, err := LoadCorpus(ctx, dir, false)
		if err != nil {
			t.Fatal(err)
		}
		if c.Len() != plain.Len() {
			t.Fatalf("%s: %d notes, want %d", st.name, c.Len(), plain.Len())
		}
		for i := 0; i < c.Len(); i++ {
			if a, b := fmt.Sprintf("%+v", *c.Note(i)), fmt.Sprintf("%+v", *plain.Note(i)); strings.ReplaceAll(a, "[]", "<nil>") != strings.ReplaceAll(b, "[]", "<nil>") {
				t.Fatalf("%s: note %d\n%s\n%s", st.name, i, a, b)
			}
		}
		if a, b := fmt.Sprintf("%+v", c.Topics), fmt.Sprintf("%+v", plain.Topics); a != b {
			t.Fatalf("%s: topics\n%s\n%s", st.name, a, b)
		}
		samePostings(t, st.name, c.Index(Rankers[DefaultRanker].An), plain.Index(Rankers[DefaultRanker].An))
		sameOutput(t, st.name, c, plain, lazyInjects(t, rng, 20))
		if c.tok == nil {
			t.Fatalf("%s: no token counts", st.name)
		}
		for i := 0; i < c.Len(); i++ {
			line := string(appendLine(nil, c.Note(i)))
			if got := int(c.tok.lineOf(i)); got != 0 && got != cnt.Count(line) { // 0: a chunk no replaced segment had
				t.Fatalf("%s: note %d counted %d, want %d", st.name, i, got, cnt.Count(line))
			}
		}
	}
}

// TestUpdateKnownWordsNoTokenizer: an edit made of words the memory
// already has is counted from the cache's chunk counts: the update does
// not load the tokenizer, and the counts are exact.
func TestUpdateKnownWordsNoTokenizer(t *testing.T) {
	rng := rand.New(rand.NewSource(15))
	ctx := context.Background()
	dir := writeMem(t, lazyFiles(rng, 10, 80))
	if _, err := LoadCorpusFor(ctx, dir, true, o200k(t)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "topics", "t1.md")
	b, _ := os.ReadFile(p)
	l := strings.SplitAfter(string(b), "\n")
	l[4] = "- [fact-1123] kafka deploy order slow report cache\n"
	if err := os.WriteFile(p, []byte(strings.Join(l, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh, _ := NewCounter("o200k")
	c, err := LoadCorpusFor(ctx, dir, true, fresh)
	if err != nil || c.lz == nil {
		t.Fatalf("not updated: %v", err)
	}
	if fresh.(*bpeCounter).loaded.Load() {
		t.Error("the update loaded the tokenizer for known words")
	}
	ref := o200k(t)
	for i := 0; i < c.Len(); i++ {
		if got, want := int(c.tok.lineOf(i)), ref.Count(string(appendLine(nil, c.Note(i)))); got != want {
			t.Fatalf("note %d: %d tokens, want %d: %q", i, got, want, appendLine(nil, c.Note(i)))
		}
	}
}
