package consolidate

import (
	"context"
	"fmt"
	"sort"

	"github.com/memctl/memctl/mdmem"
	"github.com/memctl/memctl/mdmem/vector"
)

// embedBatch is how many texts one /v1/embeddings call carries.
const embedBatch = 64

// Embeddings returns a unit vector per text (keyed by the text), from
// the cache vc of dir where it holds one for model, else from emb in
// batches; when save is set, the cache is rewritten with exactly the
// vectors of texts (so it never outgrows the memory). A cache that cannot
// be read is rebuilt. Without vc (nil) nothing is cached: every text is
// embedded and nothing is written.
func Embeddings(ctx context.Context, vc VectorCache, dir, model string, emb Embedder, texts []string, save bool) (map[string][]float32, error) {
	lookup, cached := func(string) []float32 { return nil }, 0
	if vc != nil {
		if m, n, look, err := vc.ReadVectors(dir); err == nil && m == model {
			lookup, cached = look, n
		}
	}
	uniq := map[string]bool{}
	var todo []string
	out := map[string][]float32{}
	for _, t := range texts {
		if uniq[t] {
			continue
		}
		uniq[t] = true
		if v := lookup(t); v != nil {
			out[t] = v
		} else {
			todo = append(todo, t)
		}
	}
	sort.Strings(todo)
	for i := 0; i < len(todo); i += embedBatch {
		part := todo[i:min(i+embedBatch, len(todo))]
		vs, err := emb.Embed(ctx, part)
		if err != nil {
			return nil, fmt.Errorf("embeddings (%s): %w", model, err)
		}
		if len(vs) != len(part) {
			return nil, fmt.Errorf("embeddings (%s): %d vectors for %d texts", model, len(vs), len(part))
		}
		for j, v := range vs {
			// A vector with no direction (zero, NaN) ranks nothing: the
			// text is left to words, and asked for again next run.
			if u := vector.Unit(v); u != nil {
				out[part[j]] = u
			}
		}
	}
	if vc == nil || !save || len(todo) == 0 && len(out) == cached {
		return out, nil
	}
	if err := vc.WriteVectors(ctx, dir, model, out); err != nil {
		return out, fmt.Errorf("embedding cache: %w", err)
	}
	return out, nil
}

// EmbeddingEndpoint is the configured embedding endpoint: the LLM's base
// URL and key (see LLMEndpoint) and the embedding model,
// llm.embedding_model or MEMCTL_EMBEDDING_MODEL over it ("" = none).
func EmbeddingEndpoint(cfg *mdmem.Config, getenv func(string) string) (baseURL, key, model string) {
	baseURL, key, _, _ = LLMEndpoint(cfg, getenv)
	model = cfg.LLM.EmbeddingModel
	if v := getenv("MEMCTL_EMBEDDING_MODEL"); v != "" {
		model = v
	}
	return baseURL, key, model
}

// EmbedOne embeds one text with emb: the vector of, say, inject's task.
func EmbedOne(ctx context.Context, emb Embedder, text string) ([]float32, error) {
	vs, err := emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("%d vectors for 1 text", len(vs))
	}
	return vs[0], nil
}

func dot(a, b []float32) float64 {
	if len(a) != len(b) {
		return 0
	}
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// rrfK is the constant of reciprocal rank fusion: 1/(k + rank).
const rrfK = 60

// fuse merges two rankings by reciprocal rank fusion; ties keep the
// order of the first.
func fuse(a, b []*item) []*item {
	score := map[*item]float64{}
	first := map[*item]int{}
	var all []*item
	for _, l := range [][]*item{a, b} {
		for r, it := range l {
			if _, ok := score[it]; !ok {
				first[it] = len(all)
				all = append(all, it)
			}
			score[it] += 1 / float64(rrfK+r+1)
		}
	}
	sort.SliceStable(all, func(i, j int) bool {
		if score[all[i]] != score[all[j]] {
			return score[all[i]] > score[all[j]]
		}
		return first[all[i]] < first[all[j]]
	})
	return all
}
