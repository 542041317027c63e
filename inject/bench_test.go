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
