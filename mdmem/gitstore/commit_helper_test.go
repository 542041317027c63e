package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"time"
)

// CommitRequest is the tests' shorthand for one commit of worktree files.
type CommitRequest struct {
	Paths     []string
	Message   string
	Author    Signature
	When      time.Time
	CheckBase bool              // plan on Base instead of the current HEAD
	Base      string            // with CheckBase
	Contents  map[string][]byte // by path: these bytes instead of the worktree's
}

// Commit commits the worktree content of req.Paths (a missing file is
// deleted) through Prepare and Land, as memctl's write transaction does
// for a file it already wrote, holding memctl's lock (waiting up to 10 s)
// unless the caller holds it. It returns "" when nothing changed.
func (r *Repo) Commit(ctx context.Context, req CommitRequest) (hash string, err error) {
	err = r.withLock(ctx, 10*time.Second, func() error {
		base := req.Base
		if !req.CheckBase {
			var err error
			if base, err = r.HeadHash(ctx); err != nil {
				return err
			}
		}
		files := map[string][]byte{}
		for _, p := range req.Paths {
			if b, ok := req.Contents[p]; ok {
				files[p] = b
				continue
			}
			if _, err := r.validatePath(p); err != nil {
				return err
			}
			tp, _ := r.validatePath(p)
			if _, missing, err := r.lstatInRepo(tp); err != nil {
				return err
			} else if missing {
				files[p] = nil
				continue
			}
			b, err := os.ReadFile(filepath.Join(r.root, filepath.FromSlash(tp)))
			if err != nil {
				return err
			}
			files[p] = b
		}
		p, err := r.Prepare(ctx, PrepareRequest{Base: base, Files: files, Message: req.Message, Author: req.Author, When: req.When})
		if err != nil || p == nil {
			return err
		}
		if err := r.Land(ctx, p, LandSteps{}); err != nil {
			return err
		}
		hash = p.Commit
		return nil
	})
	return hash, err
}
