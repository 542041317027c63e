package gitstore

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// repairLockWait bounds how long Repair waits for memctl.lock.
var repairLockWait = 2 * time.Second

// Check verifies the repository is usable: HEAD resolves (or its branch is
// unborn), no loose ref is a zero-length file, no lock file of a crashed
// memctl process is left, and the index decodes. It returns all problems
// found, joined.
func (r *Repo) Check(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var errs []error
	if _, _, err := r.headCommit(); err != nil {
		errs = append(errs, fmt.Errorf("HEAD does not resolve: %w", err))
	}
	for _, z := range r.zeroLengthRefs() {
		errs = append(errs, fmt.Errorf("git: ref %s is an empty file", z))
	}
	if _, err := r.readIndex(); err != nil {
		errs = append(errs, err)
	}
	if r.held.Load() != nil {
		for _, m := range staleMarkers(r.gitDir) {
			if t, ok := markerTarget(r.gitDir, m); ok && sameFile(filepath.Join(r.gitDir, markerDirName, m), t) {
				errs = append(errs, fmt.Errorf("git: stale lock file %s left by an interrupted memctl commit", t))
			}
		}
	}
	return errors.Join(errs...)
}

func (r *Repo) zeroLengthRefs() []string {
	var out []string
	base := filepath.Join(r.gitDir, "refs")
	_ = filepath.WalkDir(base, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() || strings.HasSuffix(p, ".lock") {
			return nil
		}
		if fi, err := de.Info(); err == nil && fi.Mode().IsRegular() && fi.Size() == 0 {
			rel, _ := filepath.Rel(r.gitDir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// needsRepair is a cheap test used by Open.
func (r *Repo) needsRepair() (bool, error) {
	if len(staleMarkers(r.gitDir)) > 0 || len(r.zeroLengthRefs()) > 0 {
		return true, nil
	}
	_, err := r.readIndex()
	return errors.Is(err, errIndexCorrupt), nil
}

// Repair fixes what can be fixed safely and returns a description of each
// fix: lock files left by a crashed memctl process are removed (never
// those of git processes), zero-length loose refs are restored from their
// reflog, and an index that does not decode is rebuilt from HEAD (keeping
// stat data for files whose content matches, so git status stays fast). An
// index using an unsupported feature is not touched. Repair takes memctl's
// lock unless this Repo holds it.
func (r *Repo) Repair(ctx context.Context) (fixed []string, err error) {
	err = r.withLock(ctx, repairLockWait, func() error {
		fixed = append(fixed, cleanupStaleLocks(r.gitDir)...)
		for _, ref := range r.zeroLengthRefs() {
			msg, err := r.restoreRefFromReflog(ref)
			if err != nil {
				return err
			}
			fixed = append(fixed, msg)
		}
		_, ierr := r.readIndex()
		if ierr == nil || !errors.Is(ierr, errIndexCorrupt) {
			return nil
		}
		o := r.newObjStore()
		defer o.close()
		tree, _, err := r.headTree(o)
		if err != nil {
			return err
		}
		l, err := acquireLock(r.gitDir, r.indexPath(), "index")
		if err != nil {
			return err
		}
		defer l.release()
		ix, err := r.indexFromTree(o, tree)
		if err != nil {
			return err
		}
		if err := l.write(ix.encode()); err != nil {
			return err
		}
		if err := l.commit(); err != nil {
			return err
		}
		fixed = append(fixed, fmt.Sprintf("rebuilt the git index from HEAD (%v); changes that were staged but not committed must be staged again", ierr))
		return nil
	})
	return fixed, err
}

// restoreRefFromReflog rewrites an empty loose ref with the newest value in
// its reflog whose commit exists. A ref without a usable reflog is removed
// when packed-refs has it, else reported as unrepairable.
func (r *Repo) restoreRefFromReflog(ref string) (string, error) {
	o := r.newObjStore()
	defer o.close()
	var last plumbing.Hash
	if f, err := os.Open(filepath.Join(r.gitDir, "logs", filepath.FromSlash(ref))); err == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64*1024), 1<<20)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) >= 2 && plumbing.IsHash(fields[1]) {
				h := plumbing.NewHash(fields[1])
				if !h.IsZero() && o.has(h) {
					last = h
				}
			}
		}
		f.Close()
	}
	target := filepath.Join(r.gitDir, filepath.FromSlash(ref))
	l, err := acquireLock(r.gitDir, target, refMarker(ref))
	if err != nil {
		return "", err
	}
	defer l.release()
	if last.IsZero() {
		if h, ok, _ := r.readPackedRef(ref); ok {
			if err := os.Remove(target); err != nil {
				return "", err
			}
			return fmt.Sprintf("removed empty loose ref %s; packed-refs has it at %s", ref, h), nil
		}
		return "", fmt.Errorf("git: ref %s is an empty file and has no usable reflog; restore it by hand", ref)
	}
	if err := l.write([]byte(last.String() + "\n")); err != nil {
		return "", err
	}
	if err := l.commit(); err != nil {
		return "", err
	}
	return fmt.Sprintf("restored empty ref %s to %s from its reflog", ref, last), nil
}
