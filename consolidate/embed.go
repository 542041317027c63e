package consolidate

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"sort"

	"github.com/memctl/memctl/mdmem"
)

// embeddingCache is the cache file of vectors, in .memctl/cache/: a JSON
// object {"model": m, "vectors": {hash: base64 of little-endian
// float32s}}, keyed by a hash of the text. Derived data: deleting it costs
// one round of embedding calls.
var embeddingCache = path.Base(mdmem.EmbeddingsCachePath)

// embedBatch is how many texts one /v1/embeddings call carries.
const embedBatch = 64

type embeddingFile struct {
	Model   string            `json:"model"`
	Vectors map[string]string `json:"vectors"`
}

func textHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:16])
}

func encodeVec(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

func decodeVec(s string) []float32 {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b)%4 != 0 || len(b) == 0 {
		return nil
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// Embeddings returns a unit vector per text (keyed by the text), from
// the cache where it holds one for model, else from emb in batches; when
// save is set, the cache is rewritten with exactly the vectors of texts
// (so it never outgrows the memory). A cache that cannot be read is
// rebuilt.
func Embeddings(ctx context.Context, dir, model string, emb Embedder, texts []string, save bool) (map[string][]float32, error) {
	var cache embeddingFile
	if b, err := mdmem.ReadCacheFile(dir, embeddingCache); err == nil && b != nil {
		if json.Unmarshal(b, &cache) != nil || cache.Model != model {
			cache = embeddingFile{}
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
		if v := decodeVec(cache.Vectors[textHash(t)]); v != nil {
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
			out[part[j]] = unit(v)
		}
	}
	if !save || len(todo) == 0 && len(out) == len(cache.Vectors) {
		return out, nil
	}
	next := embeddingFile{Model: model, Vectors: map[string]string{}}
	for t, v := range out {
		next.Vectors[textHash(t)] = encodeVec(v)
	}
	b, err := json.Marshal(next)
	if err != nil {
		return nil, err
	}
	if err := mdmem.WriteCacheFile(ctx, dir, embeddingCache, b); err != nil {
		return out, fmt.Errorf("embedding cache: %w", err)
	}
	return out, nil
}

// unit scales v to length 1 (a zero vector stays zero).
func unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if n == 0 {
		return out
	}
	n = math.Sqrt(n)
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
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
