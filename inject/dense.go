package inject

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/memctl/memctl/mdmem"
)

// VectorCacheFile is the cache of embedding vectors in .memctl/cache/:
// a JSON object {"model": m, "vectors": {VectorKey(text): EncodeVector(v)}}.
// consolidate fills it (entries and candidates it embeds); inject only
// reads it. Derived data: deleting it costs one round of embedding calls.
const VectorCacheFile = "embeddings.json"

// VectorFile is the JSON form of VectorCacheFile.
type VectorFile struct {
	Model   string            `json:"model"`
	Vectors map[string]string `json:"vectors"`
}

// VectorKey is the cache key of a text: a hash of its bytes.
func VectorKey(text string) string {
	h := sha256.Sum256([]byte(text))
	return hex.EncodeToString(h[:16])
}

// EncodeVector is the cache form of a vector: base64 of little-endian
// float32s.
func EncodeVector(v []float32) string {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return base64.StdEncoding.EncodeToString(b)
}

// DecodeVector reverses EncodeVector; nil for anything that is not a
// non-empty whole number of float32s.
func DecodeVector(s string) []float32 {
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

// ReadVectorFile reads the vector cache of the memory in dir. A missing
// file is an empty cache; one that is not valid JSON is an error (the
// writer replaces it whole, so it is foreign or damaged).
func ReadVectorFile(dir string) (*VectorFile, error) {
	f := &VectorFile{}
	b, err := mdmem.ReadCacheFile(dir, VectorCacheFile)
	if err != nil || b == nil {
		return f, err
	}
	if err := json.Unmarshal(b, f); err != nil {
		return &VectorFile{}, fmt.Errorf("%s/%s: %w", mdmem.CacheDir, VectorCacheFile, err)
	}
	return f, nil
}

// MaxEmbedBytes caps the task text embedded for the dense ranking:
// embedding models read a few thousand tokens at most.
const MaxEmbedBytes = 8 << 10

// EmbedText is the part of a task that is embedded: trimmed, its first
// MaxEmbedBytes, cut at a rune boundary.
func EmbedText(task string) string {
	task = strings.TrimSpace(task)
	if len(task) <= MaxEmbedBytes {
		return task
	}
	cut := MaxEmbedBytes
	for cut > 0 && !utf8.RuneStart(task[cut]) {
		cut--
	}
	return task[:cut]
}

// Unit returns v scaled to length 1, or nil when it has no direction
// (empty, all zeros) or holds a NaN or an infinity.
func Unit(v []float32) []float32 {
	var n float64
	for _, x := range v {
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil
		}
		n += f * f
	}
	if n == 0 || math.IsInf(n, 0) {
		return nil
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

// Dense is the embedding side of L2 ranking: the task's vector and the
// cached vectors of entries, by VectorKey of their text. Entries without
// a usable vector (none cached, another length than the task's, NaN or
// zero) are ranked by words alone.
type Dense struct {
	query   []float32
	vectors map[string]string
}

// ErrBadVector is returned for a task vector that has no direction:
// empty, all zeros, or holding a NaN or an infinity.
var ErrBadVector = errors.New("embedding has no direction (empty, zero, NaN or infinite)")

// NewDense pairs the task's vector with the cached entry vectors (a
// VectorFile's Vectors).
func NewDense(query []float32, vectors map[string]string) (*Dense, error) {
	q := Unit(query)
	if q == nil {
		return nil, ErrBadVector
	}
	return &Dense{query: q, vectors: vectors}, nil
}

// vector is the unit vector cached for text, nil when there is none of
// the task vector's length or it has no direction.
func (d *Dense) vector(text string) []float32 {
	v := DecodeVector(d.vectors[VectorKey(text)])
	if len(v) != len(d.query) {
		return nil
	}
	return Unit(v)
}

// rrfK is the constant of reciprocal rank fusion: a rank r counts 1/(k+r).
const rrfK = 60

// denseDepth is how many entries the embedding ranking contributes: twice
// the top-K, at least 16 and at most 64 (64 when top-K is 0, "as many as
// the budget allows").
func denseDepth(topK int) int {
	if topK <= 0 {
		return 64
	}
	return min(max(2*topK, 16), 64)
}

// rank returns the eligible notes by cosine similarity to the task, best
// first (ties in file order), at most depth, positive similarity only;
// which eligible notes have a usable vector; and how many are eligible.
func (d *Dense) rank(c *Corpus, eligible func(int) bool, depth int) (hits []Hit, has map[int]bool, n int) {
	has = map[int]bool{}
	for i := range c.Notes {
		if !eligible(i) {
			continue
		}
		n++
		v := d.vector(c.Notes[i].Content)
		if v == nil {
			continue
		}
		has[i] = true
		var s float64
		for k := range v {
			s += float64(v[k]) * float64(d.query[k])
		}
		if s > 0 {
			hits = append(hits, Hit{Doc: i, Score: s})
		}
	}
	sortHits(hits)
	return hits[:min(depth, len(hits))], has, n
}

// fuse merges the lexical ranking (every hit, best first) with the
// embedding ranking by reciprocal rank fusion: a note scores 1/(k+r) for
// its rank r in each list. A note without a usable vector (has) counts
// its lexical rank twice, so it is neither helped nor hurt by having no
// vector: with no vectors at all the lexical order is kept. Ties go to
// the better lexical rank, then file order. The hits' scores become the
// fused scores.
func fuse(lexical, dense []Hit, has map[int]bool) []Hit {
	score := map[int]float64{}
	lexRank := map[int]int{}
	var out []Hit
	for r, h := range lexical {
		if _, ok := lexRank[h.Doc]; ok {
			continue
		}
		lexRank[h.Doc] = r
		s := 1 / float64(rrfK+r+1)
		if !has[h.Doc] {
			s *= 2
		}
		score[h.Doc] += s
		out = append(out, Hit{Doc: h.Doc})
	}
	seen := map[int]bool{}
	for r, h := range dense {
		if seen[h.Doc] {
			continue
		}
		seen[h.Doc] = true
		if _, ok := lexRank[h.Doc]; !ok {
			lexRank[h.Doc] = len(lexical)
			out = append(out, Hit{Doc: h.Doc})
		}
		score[h.Doc] += 1 / float64(rrfK+r+1)
	}
	for k := range out {
		out[k].Score = score[out[k].Doc]
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Score != b.Score {
			return a.Score > b.Score
		}
		if lexRank[a.Doc] != lexRank[b.Doc] {
			return lexRank[a.Doc] < lexRank[b.Doc]
		}
		return a.Doc < b.Doc
	})
	return out
}

// denseHits is the L2 ranking with embeddings: every lexical hit of rk
// fused with the entries nearest the task's vector, the best topK (all
// when topK is 0); and a warning when no eligible entry has a usable
// vector (the ranking is then the lexical one).
func (c *Corpus) denseHits(d *Dense, rk *ranking, eligible func(int) bool, topK int) ([]Hit, string) {
	dense, has, n := d.rank(c, eligible, denseDepth(topK))
	out := fuse(rk.top(0), dense, has)
	if topK > 0 && len(out) > topK {
		out = out[:topK]
	}
	if n > 0 && len(has) == 0 {
		return out, fmt.Sprintf("none of the %d entries to rank has a cached vector of the task vector's length (%d); ranking by words only (an LLM run of memctl consolidate embeds the entries)", n, len(d.query))
	}
	return out, ""
}
