package inject

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// loadCached returns the corpus read from a fresh, intact cache (every
// segment kept, none written), else nil.
func loadCached(ctx context.Context, dir string) (*Corpus, error) {
	v, err := mdmem.OpenReadView(dir)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	files, err := memoryFiles(v)
	if err != nil {
		return nil, err
	}
	key, err := statKeys(dir, files)
	if err != nil {
		return nil, err
	}
	m := readManifest(dir)
	if m == nil {
		return nil, nil
	}
	l := &segmentLoad{ctx: ctx, v: v, dir: dir, files: files, key: key, at: make([]*segment, len(key)), hashes: make([][]byte, len(key))}
	kept := l.keep(m)
	if l.place(kept, l.open(kept)) || l.changed {
		return nil, nil
	}
	var segs []*segment
	for _, sg := range l.at {
		if sg != nil {
			segs = append(segs, sg)
		}
	}
	return joinSegments(ctx, dir, segs, m.dups)
}

// decoded is the number of notes a cached corpus has decoded.
func decoded(c *Corpus) int {
	n := 0
	for _, p := range c.lz.parts {
		n += len(p.memo)
	}
	return n
}

// posting is one posting of a term with the field lengths of its note.
type posting struct {
	doc int32
	tf  [nFields]uint16
	len [nFields]uint16
}

// flatPostings returns term t's postings over all of ix's runs, its notes
// numbered in the corpus; false if a run failed its check.
func flatPostings(ix *Index, t int32) ([]posting, bool) {
	var out []posting
	for r := range ix.runs(t) {
		for k, d := range r.doc {
			p := posting{doc: d + r.base}
			for f := range p.tf {
				p.tf[f], p.len[f] = r.tf[f][k], r.docLen[f][d]
			}
			out = append(out, p)
		}
	}
	return out, !ix.corrupt
}

// samePostings checks that every term of want (an index built in
// memory) has the same postings in got (notes, frequencies and field
// lengths), and the same average lengths.
func samePostings(t *testing.T, name string, got, want *Index) {
	t.Helper()
	if got.N != want.N || got.AvgLen != want.AvgLen {
		t.Fatalf("%s: %d notes, avg %v; rebuilt %d, avg %v", name, got.N, got.AvgLen, want.N, want.AvgLen)
	}
	for w, pid := range want.Terms {
		cid, ok := got.lookup(w)
		if !ok {
			t.Fatalf("%s: term %q missing", name, w)
		}
		if got.df(cid) != want.df(pid) {
			t.Fatalf("%s: term %q df %d, want %d", name, w, got.df(cid), want.df(pid))
		}
		g, ok := flatPostings(got, cid)
		if !ok {
			t.Fatalf("%s: term %q: postings fail their check", name, w)
		}
		if e, _ := flatPostings(want, pid); !slices.Equal(g, e) {
			t.Fatalf("%s: term %q postings differ:\n%v\nwant %v", name, w, g, e)
		}
	}
	if _, ok := got.lookup("no-such-term"); ok {
		t.Fatalf("%s: unknown term found", name)
	}
}

// bigTopics are topic files of at least segmentTarget bytes each, so each
// gets a segment of its own.
func bigTopics(rng *rand.Rand, n int) map[string]string {
	files := map[string]string{"MEMORY.md": sampleMain}
	words := strings.Fields("order cache redis report api slow index mysql deploy kafka queue budget token")
	for f := 0; f < n; f++ {
		var b strings.Builder
		b.WriteString("# Topic\n\n")
		for i := 0; int64(b.Len()) < segmentTarget+1024; i++ {
			fmt.Fprintf(&b, "- [fact-%d%05d] %s %s note %d about %s (session · 2025-0%d-1%d)\n", f+1, i,
				words[rng.Intn(len(words))], words[rng.Intn(len(words))], i, words[rng.Intn(len(words))], 1+i%9, i%10)
		}
		files[fmt.Sprintf("topics/t%d.md", f)] = b.String()
	}
	return files
}

type segFile struct {
	size  int64
	mtime time.Time
}

func segmentFiles(t *testing.T, dir string) map[string]segFile {
	t.Helper()
	ents, err := os.ReadDir(segmentDir(dir))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]segFile{}
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = segFile{fi.Size(), fi.ModTime()}
	}
	return out
}

// TestOneLineEditRewritesOneSegment: a one-line hand edit of one topic
// file writes one new segment, for that file only (and the manifest); the
// other segment files are left as they were, and the output is the
// Markdown's.
func TestOneLineEditRewritesOneSegment(t *testing.T) {
	rng := rand.New(rand.NewSource(21))
	ctx := context.Background()
	dir := writeMem(t, bigTopics(rng, 3))
	cnt := o200k(t)
	if _, err := LoadCorpusFor(ctx, dir, true, cnt); err != nil {
		t.Fatal(err)
	}
	before := segmentFiles(t, dir)
	if len(before) != 4 {
		t.Fatalf("%d segments, want 4 (MEMORY.md and three topics)", len(before))
	}
	p := filepath.Join(dir, "topics", "t1.md")
	src, _ := os.ReadFile(p)
	edited := strings.Replace(string(src), " note 7 about", " note 7, edited by hand, about", 1)
	if err := os.WriteFile(p, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh, _ := NewCounter("o200k")
	c, err := LoadCorpusFor(ctx, dir, true, fresh)
	if err != nil || c.lz == nil {
		t.Fatalf("not read through the cache: %v", err)
	}
	if fresh.(*bpeCounter).loaded.Load() {
		t.Error("the edit loaded the tokenizer")
	}
	after := segmentFiles(t, dir)
	var added []string
	for name, f := range after {
		if old, ok := before[name]; !ok {
			added = append(added, name)
		} else if old != f {
			t.Errorf("segment %s rewritten", name)
		}
	}
	if len(added) != 1 || len(after) != 4 {
		t.Fatalf("segments added %v, %d in all; want one new, 4 in all", added, len(after))
	}
	sg := loadSegment(ctx, dir, added[0], nil, segStamp{})
	if sg == nil || len(sg.key) != 1 || sg.key[0].Path != "topics/t1.md" {
		t.Fatalf("the new segment does not hold topics/t1.md alone")
	}
	var total int64
	for _, f := range after {
		total += f.size
	}
	if s := after[added[0]].size; s*2 > total {
		t.Errorf("new segment %d bytes of %d", s, total)
	}
	plain, err := LoadCorpus(ctx, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	sameOutput(t, "edited", c, plain, lazyInjects(t, rng, 10))
	samePostings(t, "edited", c.Index(Rankers[DefaultRanker].An), plain.Index(Rankers[DefaultRanker].An))
}

// TestCacheStates: whatever state the cache is in, inject prints what it
// prints on the Markdown, and the next run leaves a fresh cache.
func TestCacheStates(t *testing.T) {
	t.Parallel() // long: runs beside the package's other tests
	rng := rand.New(rand.NewSource(22))
	ctx := context.Background()
	opts := lazyInjects(t, rng, 8)
	segPath := func(dir string) string {
		m := readManifest(dir)
		if m == nil || len(m.segs) == 0 {
			t.Fatal("no manifest")
		}
		return filepath.Join(segmentDir(dir), m.segs[len(m.segs)-1].Name)
	}
	manifestPath := func(dir string) string { return filepath.Join(dir, filepath.FromSlash(IndexCacheFile)) }
	random := func(n int) []byte {
		b := make([]byte, n)
		rng.Read(b)
		return b
	}
	cases := []struct {
		name  string
		state func(dir string)
	}{
		{"fresh", func(string) {}},
		{"stale: a line changed", func(dir string) {
			p := filepath.Join(dir, "topics", "t1.md")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, "- [fact-4242] zebra kafka order cache (session · 2025-05-05)\n"...), 0o644)
		}},
		{"missing manifest", func(dir string) { os.Remove(manifestPath(dir)) }},
		{"missing segment", func(dir string) { os.Remove(segPath(dir)) }},
		{"no cache directory", func(dir string) { os.RemoveAll(filepath.Join(dir, filepath.FromSlash(CacheDir))) }},
		{"manifest random bytes", func(dir string) { os.WriteFile(manifestPath(dir), random(300), 0o644) }},
		{"manifest truncated", func(dir string) {
			b, _ := os.ReadFile(manifestPath(dir))
			os.WriteFile(manifestPath(dir), b[:len(b)/2], 0o644)
		}},
		{"segment random bytes", func(dir string) {
			p := segPath(dir)
			fi, _ := os.Stat(p)
			os.WriteFile(p, random(int(fi.Size())), 0o644)
		}},
		{"segment truncated", func(dir string) {
			p := segPath(dir)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/3], 0o644)
		}},
		{"half written (killed before the rename)", func(dir string) {
			os.WriteFile(filepath.Join(segmentDir(dir), ".x.seg.tmp-1"), random(5000), 0o644)
			os.WriteFile(filepath.Join(filepath.Dir(manifestPath(dir)), ".index.bin.tmp-1"), random(100), 0o644)
			p := filepath.Join(dir, "topics", "t0.md")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, append(b, "- a hand note written while a run was killed\n"...), 0o644)
		}},
		{"older memctl (format v4)", func(dir string) {
			b, _ := os.ReadFile(manifestPath(dir))
			os.WriteFile(manifestPath(dir), append([]byte("memctl-index-v4\n"), b[16:]...), 0o644)
		}},
		{"edited twice within one second, same size", func(dir string) {
			// The second write keeps size, mtime and (as on a coarse file
			// system) ctime and inode: only the recorded hash sees it.
			m := readManifest(dir)
			p := filepath.Join(dir, "topics", "t2.md")
			b, _ := os.ReadFile(p)
			i := bytes.Index(b, []byte("] "))
			b[i+2] ^= 0x20 // flip a letter's case
			os.WriteFile(p, b, 0o644)
			v, _ := mdmem.OpenReadView(dir)
			files, _ := memoryFiles(v)
			v.Close()
			now, _ := statKeys(dir, files)
			for k := range m.files {
				h := m.files[k].Hash
				if len(h) == 0 {
					t.Fatal("a file written just now has no hash")
				}
				m.files[k] = now[k]
				m.files[k].Hash = h
			}
			os.WriteFile(manifestPath(dir), m.encode(), 0o644)
		}},
		{"file deleted", func(dir string) { os.Remove(filepath.Join(dir, "topics", "t1.md")) }},
		{"MEMORY.md deleted", func(dir string) { os.Remove(filepath.Join(dir, "MEMORY.md")) }},
		{"topic added", func(dir string) {
			os.WriteFile(filepath.Join(dir, "topics", "a-new.md"), []byte("# New\n\n- [fact-3001] zebra order cache (session · 2025-10-01)\n- [fact-0001] an id written twice\n"), 0o644)
		}},
	}
	for _, tc := range cases {
		dir := writeMem(t, lazyFiles(rand.New(rand.NewSource(7)), 6, 60))
		if _, err := LoadCorpusFor(ctx, dir, true, o200k(t)); err != nil {
			t.Fatal(err)
		}
		tc.state(dir)
		plain, err := LoadCorpus(ctx, dir, false)
		if err != nil {
			t.Fatal(err)
		}
		c, err := LoadCorpusFor(ctx, dir, true, o200k(t))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		sameOutput(t, tc.name, c, plain, opts)
		if c, err := loadCached(ctx, dir); err != nil || c == nil {
			t.Fatalf("%s: no fresh cache after the run (%v)", tc.name, err)
		}
		again, _ := LoadCorpusFor(ctx, dir, true, o200k(t))
		sameOutput(t, tc.name+" (next run)", again, plain, opts)
	}
}

// TestRandomEditsSameAsNoCache: over random hand edits (lines added,
// changed and deleted; topic files added and removed), inject through the
// cache prints byte for byte what it prints on the Markdown.
func TestRandomEditsSameAsNoCache(t *testing.T) {
	t.Parallel() // long: runs beside the package's other tests
	rng := rand.New(rand.NewSource(23))
	ctx := context.Background()
	dir := writeMem(t, lazyFiles(rng, 8, 40))
	cnt := o200k(t)
	words := strings.Fields("order cache redis report api slow index mysql deploy kafka zebra 缓存 ``` it's")
	line := func() string {
		return fmt.Sprintf("- [fact-%d] %s %s %s (session · 2025-0%d-0%d)\n", 5000+rng.Intn(3000),
			words[rng.Intn(len(words))], words[rng.Intn(len(words))], words[rng.Intn(len(words))], 1+rng.Intn(9), 1+rng.Intn(9))
	}
	topics := func() []string {
		m, _ := filepath.Glob(filepath.Join(dir, "topics", "*.md"))
		return m
	}
	for round := 0; round < 40; round++ {
		if _, err := LoadCorpusFor(ctx, dir, true, cnt); err != nil {
			t.Fatal(err)
		}
		ts := topics()
		p := filepath.Join(dir, "MEMORY.md")
		if len(ts) > 0 && rng.Intn(4) > 0 {
			p = ts[rng.Intn(len(ts))]
		}
		b, _ := os.ReadFile(p)
		lines := strings.SplitAfter(string(b), "\n")
		k := rng.Intn(len(lines))
		what := rng.Intn(6)
		switch what {
		case 0, 1: // a line changed
			lines[k] = line()
		case 2: // a line added
			lines = append(lines[:k], append([]string{line()}, lines[k:]...)...)
		case 3: // a line deleted
			lines = append(lines[:k], lines[k+1:]...)
		case 4: // a topic added
			p = filepath.Join(dir, "topics", fmt.Sprintf("new-%d.md", round))
			lines = []string{"# New\n\n", line(), line()}
		case 5: // a topic removed
			if len(ts) > 1 {
				os.Remove(ts[rng.Intn(len(ts))])
			}
		}
		if what != 5 {
			if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c, err := LoadCorpusFor(ctx, dir, true, cnt)
		if err != nil {
			t.Fatal(err)
		}
		plain, err := LoadCorpus(ctx, dir, false)
		if err != nil {
			t.Fatal(err)
		}
		sameOutput(t, fmt.Sprint("round ", round), c, plain, lazyInjects(t, rng, 3))
	}
}

// TestRacyHashRecordedOnce: files written just before the cache have
// their hash in the manifest; the first run once they are old enough
// drops it (rewriting the small manifest), and later runs neither hash
// nor write anything.
func TestRacyHashRecordedOnce(t *testing.T) {
	dir := writeMem(t, map[string]string{"MEMORY.md": sampleMain, "topics/db-notes.md": sampleDB})
	ctx := context.Background()
	if _, err := LoadCorpus(ctx, dir, true); err != nil {
		t.Fatal(err)
	}
	hashed := func() int {
		n := 0
		for _, k := range readManifest(dir).files {
			if len(k.Hash) > 0 {
				n++
			}
		}
		return n
	}
	if hashed() != 2 {
		t.Fatalf("%d files hashed, want 2 (written just now)", hashed())
	}
	time.Sleep(racyWindow + 200*time.Millisecond)
	if _, err := LoadCorpus(ctx, dir, true); err != nil {
		t.Fatal(err)
	}
	if hashed() != 0 {
		t.Fatalf("%d hashes kept after the window", hashed())
	}
	p := filepath.Join(dir, filepath.FromSlash(IndexCacheFile))
	fi1, _ := os.Stat(p)
	c, err := LoadCorpus(ctx, dir, true)
	if err != nil || c.lz == nil {
		t.Fatal(err)
	}
	if fi2, _ := os.Stat(p); !fi2.ModTime().Equal(fi1.ModTime()) || !os.SameFile(fi1, fi2) {
		t.Fatal("a fresh cache was written again")
	}
}

// TestRandomEditsManySegments: with a segment per file, random edits that
// add, change and remove notes with ids shared within and across files,
// or change only an entry's text, give the same output as --no-cache,
// the same notes with a shared id (carried over from the manifest when
// the ids did not change, else found by merging the segments' id
// hashes) and the same postings.
func TestRandomEditsManySegments(t *testing.T) {
	defer func(n int64) { segmentTarget = n }(segmentTarget)
	segmentTarget = 1
	rng := rand.New(rand.NewSource(29))
	ctx := context.Background()
	dir := writeMem(t, lazyFiles(rng, 6, 30))
	cnt := o200k(t)
	words := strings.Fields("order cache redis report api slow index mysql deploy kafka")
	line := func() string {
		return fmt.Sprintf("- [fact-%d] %s %s (session · 2025-0%d-0%d)\n", 7000+rng.Intn(25),
			words[rng.Intn(len(words))], words[rng.Intn(len(words))], 1+rng.Intn(9), 1+rng.Intn(9))
	}
	for round := 0; round < 25; round++ {
		if _, err := LoadCorpusFor(ctx, dir, true, cnt); err != nil {
			t.Fatal(err)
		}
		ts, _ := filepath.Glob(filepath.Join(dir, "topics", "*.md"))
		p := ts[rng.Intn(len(ts))]
		if round%5 == 4 {
			p = filepath.Join(dir, "topics", fmt.Sprintf("new-%d.md", round))
			os.WriteFile(p, []byte("# New\n\n"), 0o644)
		}
		b, _ := os.ReadFile(p)
		lines := strings.SplitAfter(string(b), "\n")
		for e := 0; e < 3; e++ {
			k := rng.Intn(len(lines))
			switch rng.Intn(4) {
			case 0:
				lines[k] = line()
			case 3: // the text changed, not the id (the segment holds the same ids)
				if i := strings.Index(lines[k], "] "); i > 0 {
					lines[k] = lines[k][:i+2] + words[rng.Intn(len(words))] + " " + lines[k][i+2:]
				}
			case 1:
				lines = append(lines[:k], append([]string{line()}, lines[k:]...)...)
			default:
				lines = append(lines[:k], lines[k+1:]...)
			}
		}
		if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadCorpusFor(ctx, dir, true, cnt)
		if err != nil || c.lz == nil {
			t.Fatalf("round %d: not read from the cache: %v", round, err)
		}
		if len(c.lz.parts) < len(ts) {
			t.Fatalf("round %d: %d segments for %d topic files", round, len(c.lz.parts), len(ts))
		}
		plain, err := LoadCorpus(ctx, dir, false)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := c.sharedIDs(), plain.sharedIDs(); !slices.Equal(got, want) {
			t.Fatalf("round %d: shared ids %v, want %v", round, got, want)
		}
		if again, err := loadCached(ctx, dir); err != nil || again == nil || !slices.Equal(again.sharedIDs(), plain.sharedIDs()) {
			t.Fatalf("round %d: the manifest's shared ids differ (%v)", round, err)
		}
		name := fmt.Sprint("round ", round)
		samePostings(t, name, c.Index(Rankers[DefaultRanker].An), plain.Index(Rankers[DefaultRanker].An))
		sameOutput(t, name, c, plain, lazyInjects(t, rng, 3))
	}
}

// TestCheckedSegmentTrustedUntilItsFileChanges: once a segment has passed
// its checks whole and its file is older than racyWindow, the manifest
// records its stamp, and later loads skip the checks of its checked
// sections; any write to the file (which changes its ctime) brings them
// back, so a corrupt byte is caught and the segment rebuilt.
func TestCheckedSegmentTrustedUntilItsFileChanges(t *testing.T) {
	t.Parallel() // sleeps past racyWindow
	ctx := context.Background()
	dir := writeMem(t, map[string]string{"MEMORY.md": sampleMain, "topics/db-notes.md": sampleDB})
	plain, err := LoadCorpus(ctx, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := LoadCorpus(ctx, dir, true); err != nil {
		t.Fatal(err)
	}
	for _, s := range readManifest(dir).segs {
		if s.Checked != (segStamp{}) {
			t.Fatalf("segment %s, written just now, has a stamp", s.Name)
		}
	}
	time.Sleep(racyWindow + 200*time.Millisecond)
	if _, err := LoadCorpus(ctx, dir, true); err != nil {
		t.Fatal(err)
	}
	ref := readManifest(dir).segs[0]
	if ref.Checked.Size == 0 {
		t.Fatal("no stamp recorded for a segment checked whole after the window")
	}
	if sg := loadSegment(ctx, dir, ref.Name, nil, ref.Checked); sg == nil || !sg.trusted {
		t.Fatal("a segment with its recorded stamp was not trusted")
	}
	p := filepath.Join(segmentDir(dir), ref.Name)
	cf, err := openSegment(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := []byte{cf.sec[secFlags][0] ^ 0x40} // a place code no note has: caught by the section's CRC only
	if _, err := f.WriteAt(b, cf.off[secFlags]); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if sg := loadSegment(ctx, dir, ref.Name, nil, ref.Checked); sg != nil {
		t.Fatal("a segment written after its stamp was recorded was trusted")
	}
	c, err := LoadCorpus(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	sameOutput(t, "after the write", c, plain, lazyInjects(t, rand.New(rand.NewSource(41)), 6))
	if readManifest(dir).segs[0].Name == ref.Name {
		t.Fatal("the corrupt segment was kept")
	}
}
