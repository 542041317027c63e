package inject

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"path"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/memctl/memctl/mdmem"
	"github.com/memctl/memctl/mdmem/vector"
)

// VectorCacheFile is the cache of embedding vectors in .memctl/cache/
// (mdmem.EmbeddingsCachePath), keyed by a hash of the text: consolidate
// fills it (the entries and candidates it embeds), inject only reads it.
// Derived data: deleting it costs one round of embedding calls.
//
// Layout (little-endian): the magic "MEMCTLV1"; the model's name (uint32
// length, bytes); the dimension d and the count n (uint32 each); n keys
// of 16 bytes (the first half of the text's SHA-256), ascending; n
// vectors of d float32s, in the keys' order. Read in one read, used in
// place: no parsing per vector.
var VectorCacheFile = path.Base(mdmem.EmbeddingsCachePath)

const (
	vecMagic   = "MEMCTLV1"
	vecKeySize = 16
)

// Vectors is a read vector cache.
type Vectors struct {
	Model string
	dims  int
	keys  []byte // n sorted keys
	data  []byte // n × dims float32s
}

// Len is how many vectors the cache holds.
func (v *Vectors) Len() int {
	if v == nil {
		return 0
	}
	return len(v.keys) / vecKeySize
}

// Dims is the length of the cached vectors.
func (v *Vectors) Dims() int {
	if v == nil {
		return 0
	}
	return v.dims
}

func vectorKey(text string) [vecKeySize]byte {
	h := sha256.Sum256([]byte(text))
	return [vecKeySize]byte(h[:vecKeySize])
}

// raw returns the bytes of text's vector, nil when none is cached.
func (v *Vectors) raw(text string) []byte {
	n := v.Len()
	if n == 0 {
		return nil
	}
	k := vectorKey(text)
	i := sort.Search(n, func(i int) bool { return bytes.Compare(v.keys[i*vecKeySize:(i+1)*vecKeySize], k[:]) >= 0 })
	if i == n || !bytes.Equal(v.keys[i*vecKeySize:(i+1)*vecKeySize], k[:]) {
		return nil
	}
	return v.data[i*4*v.dims : (i+1)*4*v.dims]
}

// Lookup returns the unit vector cached for text, nil when there is none
// or it has no direction.
func (v *Vectors) Lookup(text string) []float32 {
	b := v.raw(text)
	if b == nil {
		return nil
	}
	out := make([]float32, v.dims)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return vector.Unit(out)
}

// ReadVectors reads the vector cache of the memory in dir. A missing file
// is an empty cache; one whose sizes do not add up is an error (the
// writer replaces it whole, so it is foreign or damaged).
func ReadVectors(dir string) (*Vectors, error) {
	b, err := mdmem.ReadCacheFile(dir, VectorCacheFile)
	if err != nil || b == nil {
		return &Vectors{}, err
	}
	bad := fmt.Errorf("%s/%s: not a vector cache of this memctl", mdmem.CacheDir, VectorCacheFile)
	if len(b) < len(vecMagic)+4 || string(b[:len(vecMagic)]) != vecMagic {
		return &Vectors{}, bad
	}
	b = b[len(vecMagic):]
	ml := uint64(binary.LittleEndian.Uint32(b))
	if uint64(len(b)) < 12+ml {
		return &Vectors{}, bad
	}
	v := &Vectors{Model: string(b[4 : 4+ml])}
	b = b[4+ml:]
	d, n := uint64(binary.LittleEndian.Uint32(b)), uint64(binary.LittleEndian.Uint32(b[4:]))
	b = b[8:]
	if n > 0 && d == 0 || d > 1<<20 || n > 1<<30 || uint64(len(b)) != n*(vecKeySize+4*d) {
		return &Vectors{}, bad
	}
	v.dims, v.keys, v.data = int(d), b[:n*vecKeySize], b[n*vecKeySize:]
	return v, nil
}

// WriteVectors replaces the vector cache with vecs (by text) of model.
// Vectors of another length than the first one's (in key order) are left
// out, so the cache holds one dimension.
func WriteVectors(ctx context.Context, dir, model string, vecs map[string][]float32) error {
	type kv struct {
		k [vecKeySize]byte
		v []float32
	}
	all := make([]kv, 0, len(vecs))
	for t, v := range vecs {
		all = append(all, kv{vectorKey(t), v})
	}
	sort.Slice(all, func(i, j int) bool { return bytes.Compare(all[i].k[:], all[j].k[:]) < 0 })
	d := 0
	if len(all) > 0 {
		d = len(all[0].v)
	}
	keep := all[:0]
	for i, e := range all {
		if len(e.v) == d && (i == 0 || all[i-1].k != e.k) {
			keep = append(keep, e)
		}
	}
	out := make([]byte, 0, len(vecMagic)+12+len(model)+len(keep)*(vecKeySize+4*d))
	out = append(out, vecMagic...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(model)))
	out = append(out, model...)
	out = binary.LittleEndian.AppendUint32(out, uint32(d))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(keep)))
	for _, e := range keep {
		out = append(out, e.k[:]...)
	}
	for _, e := range keep {
		for _, x := range e.v {
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(x))
		}
	}
	return mdmem.WriteCacheFile(ctx, dir, VectorCacheFile, out)
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

// Dense is the embedding side of L2 ranking: the task's vector and the
// cached vectors of entries. Entries without a usable vector (none
// cached, another length than the task's, NaN, infinite or zero) are
// ranked by words alone.
type Dense struct {
	query   []float32
	vectors *Vectors
}

// ErrBadVector is returned for a task vector that has no direction:
// empty, all zeros, or holding a NaN or an infinity.
var ErrBadVector = errors.New("embedding has no direction (empty, zero, NaN or infinite)")

// NewDense pairs the task's vector with the cached entry vectors.
func NewDense(query []float32, vectors *Vectors) (*Dense, error) {
	q := vector.Unit(query)
	if q == nil {
		return nil, ErrBadVector
	}
	return &Dense{query: q, vectors: vectors}, nil
}

// cosine is the cosine similarity of text's cached vector and the task's;
// ok is false when there is no usable vector (none, another length, no
// direction). Computed in place, without decoding the vector.
func (d *Dense) cosine(text string) (cos float64, ok bool) {
	if d.vectors.Dims() != len(d.query) {
		return 0, false
	}
	b := d.vectors.raw(text)
	if b == nil {
		return 0, false
	}
	var dot, norm float64
	for i, q := range d.query {
		x := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		dot += x * float64(q)
		norm += x * x
	}
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return 0, false
	}
	return dot / math.Sqrt(norm), true
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
	for i := range c.Len() {
		if !eligible(i) {
			continue
		}
		n++
		s, ok := d.cosine(c.Note(i).Content)
		if !ok {
			continue
		}
		has[i] = true
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
		return out, fmt.Sprintf("none of the %d entries to rank has a cached vector of the task vector's length (%d); ranking by words only (memctl consolidate embeds the entries)", n, len(d.query))
	}
	return out, ""
}
