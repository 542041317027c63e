package inject

import (
	"context"

	"github.com/memctl/memctl/mdmem"
)

// updateCache brings a stale cache up to date. (stub)
func updateCache(ctx context.Context, v *mdmem.ReadView, dir string, old *cacheFile, key []fileKey, cnt Counter) *Corpus {
	return nil
}
