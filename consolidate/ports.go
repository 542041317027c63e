package consolidate

import (
	"context"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// Consolidate does not import inject (the design card's layering). What
// it needs of it is declared here and given by the caller in Options (or
// Input): cmd passes inject.CoreMeasure, inject.Retrieval and
// inject.VectorCache. Without them consolidate still works, with the
// documented defaults of each field.

// Measure counts tokens the way inject prints the core, the measure of
// consolidate.core_max_tokens, and the tokens of a prompt, the measure of
// consolidate.batch_tokens.
type Measure interface {
	// CoreTokens is the tokens the core entries among entries take in
	// a block rendered with the tokenizer named (inject.tokenizer) at
	// now, entries older than staleDays marked old; an error for a
	// tokenizer it does not know.
	CoreTokens(tokenizer string, entries []*mdmem.Entry, now time.Time, staleDays int) (int, error)
	// LineTokens is the tokens of an entry's compact line with the
	// tokenizer named: what moving it out of the core saves at least.
	LineTokens(tokenizer string, e *mdmem.Entry) (int, error)
	// TextTokens is the tokens of text with the tokenizer named: what
	// an LLM prompt costs (consolidate.batch_tokens).
	TextTokens(tokenizer, text string) (int, error)
}

// Retrieval ranks a memory's entries for a query (inject's search): the
// neighbours of a candidate.
type Retrieval interface {
	// Index prepares mem for search and returns the search: the ids of
	// at most n entries, best match for query first ("" for an entry
	// without an id).
	Index(mem *mdmem.Memory) func(query string, n int) []string
}

// dirRetrieval is a Retrieval that also ranks the whole memory of a dir
// from its own cache (inject.CachedRetrieval): a plan that read the
// memory in part (the match cache) ranks its neighbours so. IndexDir
// returns nil when the cache does not hold entries entries.
type dirRetrieval interface {
	IndexDir(dir string, entries int) func(query string, n int) []string
}

// VectorCache keeps the embeddings of a memory's texts, for consolidate
// and inject.
type VectorCache interface {
	// ReadVectors reads the cache of the memory in dir: the model that
	// made it, how many vectors it holds and the vector of a text (nil
	// when it holds none).
	ReadVectors(dir string) (model string, n int, lookup func(text string) []float32, err error)
	// WriteVectors replaces the cache of dir with vecs, made by model.
	WriteVectors(ctx context.Context, dir, model string, vecs map[string][]float32) error
}
