package inject

import "context"

func loadCached(ctx context.Context, dir string) (*Corpus, error) { return nil, nil }

func saveCache(ctx context.Context, dir string, c *Corpus) {}
