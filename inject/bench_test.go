package inject

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// benchMemory writes the synthetic bench memory (testdata/bench/inject/gen.py).
func benchMemory(b *testing.B, topic int) string {
	dir := b.TempDir()
	gen, _ := filepath.Abs("../testdata/bench/inject/gen.py")
	if out, err := exec.Command("python3", gen, dir, "200", itoa(topic)).CombinedOutput(); err != nil {
		b.Skipf("gen.py: %v %s", err, out)
	}
	time.Sleep(racyWindow + 100*time.Millisecond) // as when the memory was written earlier: no file is hashed on each read
	return dir
}

// rebuild: every iteration starts without the index cache (the first
// inject after a memory file changed).
func benchInject(b *testing.B, topic int, cache bool, rebuild ...bool) {
	dir := benchMemory(b, topic)
	ctx := context.Background()
	o := Options{Budget: 4000, L2Reserve: 0.25, CoreMaxLines: 200, CoreMaxBytes: 25600, TopK: 8, Counter: o200k(b), StaleDays: 90,
		Now: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), Task: "fix the slow report api timeout"}
	if _, err := LoadCorpusFor(ctx, dir, cache, o.Counter); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if len(rebuild) > 0 {
			os.Remove(filepath.Join(dir, filepath.FromSlash(IndexCacheFile)))
		}
		c, err := LoadCorpusFor(ctx, dir, cache, o.Counter)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Inject(c, o); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkInject10k(b *testing.B)        { benchInject(b, 10000, true) }
func BenchmarkInject10kNoCache(b *testing.B) { benchInject(b, 10000, false) }
func BenchmarkInject100k(b *testing.B)       { benchInject(b, 100000, true) }

func BenchmarkInject10kRebuild(b *testing.B)  { benchInject(b, 10000, true, true) }
func BenchmarkInject100kRebuild(b *testing.B) { benchInject(b, 100000, true, true) }

// BenchmarkInject100kUpdate: every iteration edits one line of one topic
// file, so the cache is updated (the first inject after a hand edit).
func BenchmarkInject100kUpdate(b *testing.B) { benchUpdate(b, 100000) }
func BenchmarkInject10kUpdate(b *testing.B)  { benchUpdate(b, 10000) }

func benchUpdate(b *testing.B, topic int) {
	dir := benchMemory(b, topic)
	ctx := context.Background()
	o := Options{Budget: 4000, L2Reserve: 0.25, CoreMaxLines: 200, CoreMaxBytes: 25600, TopK: 8, Counter: o200k(b), StaleDays: 90,
		Now: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), Task: "fix the slow report api timeout"}
	if _, err := LoadCorpusFor(ctx, dir, true, o.Counter); err != nil {
		b.Fatal(err)
	}
	p := filepath.Join(dir, "topics", "topic-07.md")
	src, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		line := []byte("- [fact-9" + itoa(i) + "] an edited line about kafka deploy (session · 2025-01-01)\n")
		if err := os.WriteFile(p, append(line, src...), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		c, err := LoadCorpusFor(ctx, dir, true, o.Counter)
		if err != nil {
			b.Fatal(err)
		}
		if c.lz == nil {
			b.Fatal("cache rebuilt, not updated")
		}
		if _, err := Inject(c, o); err != nil {
			b.Fatal(err)
		}
	}
}
