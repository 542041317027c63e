package consolidate

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/memctl/memctl/inject"
	"github.com/memctl/memctl/mdmem"
)

// inject's implementations are consolidate's ports (cmd wires them).
var (
	_ Measure     = inject.CoreMeasure{}
	_ Retrieval   = inject.Retrieval{}
	_ Retrieval   = inject.CachedRetrieval{}
	_ VectorCache = inject.VectorCache{}
)

// withInject gives o inject's measure, retrieval and vector cache where
// it has none, as cmd does.
func withInject(o Options) Options {
	if o.Measure == nil {
		o.Measure = inject.CoreMeasure{}
	}
	if o.Retrieval == nil {
		o.Retrieval = inject.Retrieval{}
	}
	if o.VectorCache == nil {
		o.VectorCache = inject.VectorCache{}
	}
	return o
}

// wired gives in inject's measure and retrieval where it has none, as a
// run with cmd's options does.
func wired(in *Input) *Input {
	if in.Measure == nil {
		in.Measure = inject.CoreMeasure{}
	}
	if in.Retrieval == nil {
		in.Retrieval = inject.Retrieval{}
	}
	return in
}

func TestMeasureCoreWithoutMeasure(t *testing.T) {
	m := loadMem(t, map[string]string{"MEMORY.md": baseMemory})
	cfg := testConfig()
	est := MeasureCore(nil, cfg, m.Main, testNow)
	if est != CoreSize(m.Main) {
		t.Errorf("without a measure: %v, want the estimate %v", est, CoreSize(m.Main))
	}
	exact := MeasureCore(inject.CoreMeasure{}, cfg, m.Main, testNow)
	cnt, err := inject.NewCounter(cfg.Inject.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	if want := inject.CoreTokens(m.Main.Entries, cnt, testNow, cfg.Inject.StaleDays); exact.Tokens != want || exact.Bytes != est.Bytes {
		t.Errorf("with inject's measure: %v, want %d tokens", exact, want)
	}
	cfg.Inject.Tokenizer = "no-such-tokenizer"
	if got := MeasureCore(inject.CoreMeasure{}, cfg, m.Main, testNow); got != est {
		t.Errorf("unknown tokenizer: %v, want the estimate %v", got, est)
	}
}

type countingEmbedder struct{ n int }

func (e *countingEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	e.n += len(texts)
	out := make([][]float32, len(texts))
	for i := range texts {
		out[i] = []float32{float32(i + 1), 1}
	}
	return out, nil
}

func TestEmbeddingsWithoutCache(t *testing.T) {
	dir := t.TempDir()
	emb := &countingEmbedder{}
	for range 2 {
		v, err := Embeddings(context.Background(), nil, dir, "m", emb, []string{"a", "b"}, true)
		if err != nil || len(v) != 2 {
			t.Fatal(v, err)
		}
	}
	if emb.n != 4 {
		t.Errorf("without a cache every call embeds every text: %d embedded, want 4", emb.n)
	}
	if _, err := os.Stat(filepath.Join(dir, mdmem.CacheDir, inject.VectorCacheFile)); !os.IsNotExist(err) {
		t.Errorf("without a cache nothing is written: %v", err)
	}
	emb.n = 0
	for range 2 {
		if _, err := Embeddings(context.Background(), inject.VectorCache{}, dir, "m", emb, []string{"a", "b"}, true); err != nil {
			t.Fatal(err)
		}
	}
	if emb.n != 2 {
		t.Errorf("with inject's cache the second call embeds nothing: %d embedded, want 2", emb.n)
	}
}
