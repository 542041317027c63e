package inject

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// CoreMeasure measures the core as Inject prints it, the tokenizer given
// by name (consolidate's Measure, which must not import inject).
type CoreMeasure struct{}

// coreCounters keeps one counter per tokenizer name: loading a BPE table
// costs tens of milliseconds, and a consolidate run measures the core
// many times.
var coreCounters sync.Map // name → Counter

func counterNamed(name string) (Counter, error) {
	if c, ok := coreCounters.Load(name); ok {
		return c.(Counter), nil
	}
	cnt, err := NewCounter(name)
	if err != nil {
		return nil, err
	}
	c, _ := coreCounters.LoadOrStore(name, cnt)
	return c.(Counter), nil
}

// CoreTokens is CoreTokens with the tokenizer named.
func (CoreMeasure) CoreTokens(tokenizer string, entries []*mdmem.Entry, now time.Time, staleDays int) (int, error) {
	cnt, err := counterNamed(tokenizer)
	if err != nil {
		return 0, err
	}
	return CoreTokens(entries, cnt, now, staleDays), nil
}

// LineTokens is LineTokens with the tokenizer named.
func (CoreMeasure) LineTokens(tokenizer string, e *mdmem.Entry) (int, error) {
	cnt, err := counterNamed(tokenizer)
	if err != nil {
		return 0, err
	}
	return LineTokens(e, cnt), nil
}

// TextTokens is the tokens of text with the tokenizer named.
func (CoreMeasure) TextTokens(tokenizer, text string) (int, error) {
	cnt, err := counterNamed(tokenizer)
	if err != nil {
		return 0, err
	}
	return cnt.Count(text), nil
}

// Retrieval is Search over a memory, by id (consolidate's Retrieval).
type Retrieval struct{}

// CachedRetrieval is Retrieval over the index cache (IndexCacheFile)
// when there is one: read in place when it is fresh, brought up to date
// first when a memory file changed since (only the changed files are
// read again; see LoadCorpus). Without a cache, or when the cache does
// not hold the memory given (a file changed since it was loaded: the
// write that follows is refused as stale anyway), it is Retrieval: the
// memory's entries are indexed in memory. The hits are the same either
// way (TestCachedRetrievalMatchesRetrieval).
type CachedRetrieval struct{}

// Index returns Search over the memory's index cache, or over mem when
// the cache cannot serve it.
func (CachedRetrieval) Index(mem *mdmem.Memory) func(query string, n int) []string {
	if _, err := os.Lstat(filepath.Join(mem.Dir, filepath.FromSlash(IndexCacheFile))); err != nil {
		return Retrieval{}.Index(mem)
	}
	c, err := LoadCorpus(context.Background(), mem.Dir, true)
	if err != nil || c.Len() != len(mem.Entries()) {
		return Retrieval{}.Index(mem)
	}
	return searchIDs(c)
}

// IndexDir returns Search over the index cache of the memory in dir when
// there is one and it holds entries entries, else nil: consolidate,
// having read the memory in part (its match cache), ranks the whole
// memory so, or reads every file.
func (CachedRetrieval) IndexDir(dir string, entries int) func(query string, n int) []string {
	if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(IndexCacheFile))); err != nil {
		return nil
	}
	c, err := LoadCorpus(context.Background(), dir, true)
	if err != nil || c.Len() != entries {
		return nil
	}
	return searchIDs(c)
}

// Index builds the corpus of mem once and returns Search over it, every
// scope: the ids of at most n hits for query, best first.
func (Retrieval) Index(mem *mdmem.Memory) func(query string, n int) []string {
	return searchIDs(NewCorpus(mem))
}

// searchIDs is Search over c, every scope, by id.
func searchIDs(c *Corpus) func(query string, n int) []string {
	return func(query string, n int) []string {
		hits := Search(c, query, nil, n)
		ids := make([]string, len(hits))
		for i, h := range hits {
			ids[i] = h.ID
		}
		return ids
	}
}

// VectorCache is the embedding cache of ReadVectors and WriteVectors
// (consolidate's VectorCache).
type VectorCache struct{}

// ReadVectors reads the cache of dir: its model, size and lookup by text.
func (VectorCache) ReadVectors(dir string) (model string, n int, lookup func(text string) []float32, err error) {
	v, err := ReadVectors(dir)
	if err != nil {
		return "", 0, nil, err
	}
	return v.Model, v.Len(), v.Lookup, nil
}

// WriteVectors is WriteVectors.
func (VectorCache) WriteVectors(ctx context.Context, dir, model string, vecs map[string][]float32) error {
	return WriteVectors(ctx, dir, model, vecs)
}
