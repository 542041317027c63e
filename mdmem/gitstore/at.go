package gitstore

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// Snapshot is the content of some memory files at one commit, keyed by
// memory-relative path, with each blob's hash so callers can skip files that
// did not change between two commits.
type Snapshot struct {
	Files  map[string][]byte
	Hashes map[string]string
}

// FilesAt returns the memory files of commit for which keep returns true
// (keep receives memory-relative slash paths; only regular blobs are
// offered). An unknown commit is an error; "" means HEAD.
func (r *Repo) FilesAt(ctx context.Context, commit string, keep func(string) bool) (*Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	o := r.newObjStore()
	defer o.close()
	var h plumbing.Hash
	if commit == "" {
		head, ok, err := r.headCommit()
		if err != nil {
			return nil, err
		}
		snap := &Snapshot{Files: map[string][]byte{}, Hashes: map[string]string{}}
		if !ok {
			return snap, nil
		}
		h = head
	} else {
		if !plumbing.IsHash(commit) {
			return nil, fmt.Errorf("git: %q is not a commit hash", commit)
		}
		h = plumbing.NewHash(commit)
	}
	tree, err := o.commitTree(h)
	if err != nil {
		return nil, err
	}
	if r.prefix != "" {
		e, found, err := o.lookup(tree, r.prefix)
		if err != nil {
			return nil, err
		}
		snap := &Snapshot{Files: map[string][]byte{}, Hashes: map[string]string{}}
		if !found || !e.isTree() {
			return snap, nil
		}
		tree = e.hash
	}
	snap := &Snapshot{Files: map[string][]byte{}, Hashes: map[string]string{}}
	enter := func(_ plumbing.Hash, dir string) (bool, error) {
		if dir != "" && (path.Base(dir) == ".git" || !keepDir(keep, dir)) {
			return false, nil
		}
		return true, ctx.Err()
	}
	file := func(p string, e treeEntry) error {
		switch {
		case e.mode == modeGitlnk || e.mode == modeLink:
			// submodules and symlinks are never memory files
		case keep(p):
			_, b, err := o.read(e.hash)
			if err != nil {
				return err
			}
			snap.Files[p] = b
			snap.Hashes[p] = e.hash.String()
		}
		return nil
	}
	if err := o.walkTree(tree, "", enter, file); err != nil {
		return nil, err
	}
	return snap, nil
}

// keepDir reports whether a directory may hold a kept file: keep is asked
// about the directory path with a trailing slash.
func keepDir(keep func(string) bool, dir string) bool {
	return keep(strings.TrimSuffix(dir, "/") + "/")
}
