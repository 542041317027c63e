package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// A write in commit-first order (git's own: the commit is the truth, the
// worktree follows it) is Prepare, then Land:
//
//  1. Prepare writes the blobs, trees and the commit object of the new
//     contents on top of the planned base, and fsyncs them. Nothing is
//     visible yet: the objects are unreachable until the ref moves.
//  2. Land takes index.lock (a git process holding it makes Land fail before
//     anything changed), lets the caller record its journal, moves the
//     branch from the base to the commit by compare-and-swap under
//     <ref>.lock, lets the caller bring the worktree files to the commit,
//     and then records the new blobs in the index (with stat data where the
//     worktree file holds them) and renames index.lock into place.
//
// Only the ref's move decides whether the write happened.

// Change is one path of a prepared commit: its blob in the parent and in
// the commit, as hex hashes ("" = absent).
type Change struct {
	Path string `json:"path"` // memory-relative, slash separated
	Old  string `json:"old"`
	New  string `json:"new"`
	Mode string `json:"mode,omitempty"` // tree mode of New ("100644" when empty)
	// Work is what the worktree file held when the write was planned, when
	// not Old (an uncommitted file memctl does not commit as a hand edit,
	// such as a .gitignore init adopts): its blob, or WorkAbsent.
	Work string `json:"work,omitempty"`
}

// WorkAbsent is Change.Work for a file absent from the worktree.
const WorkAbsent = "absent"

// Planned returns what the worktree held when the write was planned: Work,
// else Old ("" = absent).
func (c Change) Planned() string {
	switch c.Work {
	case "":
		return c.Old
	case WorkAbsent:
		return ""
	}
	return c.Work
}

// PrepareRequest is a commit to build: new contents by memory-relative
// path (nil deletes the file), on top of Base ("" = unborn branch).
type PrepareRequest struct {
	Base  string
	Files map[string][]byte
	// Load holds more paths, each with a function that returns its new
	// content (not nil) when its blob is written: a large write holds one
	// such file at a time, not all of them.
	Load    map[string]func() ([]byte, error)
	Message string
	Author  Signature
	When    time.Time
	// MergeParent, when set, is the commit's second parent: a merge of
	// that commit into Base (memctl sync). The commit is made even when
	// the files come out as they are at Base.
	MergeParent string
}

// Prepared is a commit stored but not on the branch yet.
type Prepared struct {
	Ref     string   // the branch, "refs/heads/…"
	Parent  string   // "" = the branch is unborn
	Commit  string   // the new commit
	Changes []Change // the paths whose blob changes, sorted
	Subject string   // the message's first line (for the reflog)
	author  Signature
	when    time.Time
}

// Prepare builds the commit of req (see the order above) and returns it,
// or nil when the files already hold those contents at Base. It refuses
// when HEAD is not Base (ErrConcurrentUpdate) or a merge is in progress.
// The hooks (pre-commit, commit-msg) run here, and signing happens here.
func (r *Repo) Prepare(ctx context.Context, req PrepareRequest) (*Prepared, error) {
	if len(req.Files) == 0 && len(req.Load) == 0 && req.MergeParent == "" {
		return nil, errors.New("git: commit: no paths")
	}
	if req.MergeParent != "" && (!plumbing.IsHash(req.MergeParent) || req.Base == "") {
		return nil, fmt.Errorf("git: commit: bad merge parent %q on %q", req.MergeParent, req.Base)
	}
	if strings.TrimSpace(req.Message) == "" {
		return nil, errors.New("git: commit: empty message")
	}
	if req.Author == (Signature{}) {
		req.Author = MemctlSignature
	}
	if err := checkSignature(req.Author); err != nil {
		return nil, err
	}
	j := &commitJob{req: req}
	if err := r.checkCommitBase(ctx, j); err != nil {
		return nil, err
	}
	j.o = r.newObjStore()
	defer j.o.close()
	if j.born {
		var err error
		if j.oldTree, err = j.o.commitTree(j.oldHash); err != nil {
			return nil, err
		}
	}
	paths := make([]string, 0, len(req.Files)+len(req.Load))
	for p := range req.Files {
		paths = append(paths, p)
	}
	for p := range req.Load {
		if _, ok := req.Files[p]; ok {
			return nil, fmt.Errorf("git: commit: %s given twice", p)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	ar := newAttrResolver(r)
	// The blobs are hashed, compressed and written on every core, a file
	// per core at a time (a large import's files are most of its commit);
	// everything else runs here, in path order.
	var blobs sync.WaitGroup
	defer blobs.Wait() // before an early return lets the store close
	cores := make(chan struct{}, runtime.GOMAXPROCS(0))
	blobErrs := make([]error, len(paths))
	cs := make([]Change, 0, len(paths))
	for i, p := range paths {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		tp, err := r.validatePath(p)
		if err != nil {
			return nil, err
		}
		old, oldOK, err := j.o.lookup(j.oldTree, tp)
		if err != nil {
			return nil, err
		}
		c := Change{Path: p}
		if oldOK && !old.isTree() {
			c.Old = old.hash.String()
		}
		data := req.Files[p]
		if load := req.Load[p]; load != nil {
			if data, err = load(); err != nil {
				return nil, err
			}
			if data == nil {
				return nil, fmt.Errorf("git: commit: %s loaded as nil", p)
			}
		}
		wf := &worktreeFile{treePath: tp, missing: data == nil, mode: modeBlob}
		if oldOK && old.mode == modeExec {
			wf.mode = modeExec
		}
		if !wf.missing {
			conv, err := ar.conversion(tp)
			if err != nil {
				return nil, err
			}
			wf.data = normalize(conv, data, func() bool {
				if !oldOK || old.isTree() {
					return false
				}
				_, b, err := j.o.read(old.hash)
				return err == nil && bytes.Contains(b, []byte("\r\n"))
			})
			cores <- struct{}{}
			blobs.Add(1)
			go func() {
				defer func() { <-cores; blobs.Done() }()
				wf.hash, blobErrs[i] = j.o.write("blob", wf.data)
				wf.data = nil
			}()
		}
		j.files = append(j.files, wf)
		cs = append(cs, c)
	}
	blobs.Wait()
	for _, err := range blobErrs {
		if err != nil {
			return nil, err
		}
	}
	changes := map[string]change{}
	var out []Change
	for i, wf := range j.files {
		c := cs[i]
		if wf.missing {
			changes[wf.treePath] = change{del: true}
		} else {
			c.New = wf.hash.String()
			c.Mode = wf.mode
			changes[wf.treePath] = change{mode: wf.mode, hash: wf.hash}
		}
		if c.Old != c.New {
			out = append(out, c)
		}
	}
	newTree, empty, err := j.o.updateTree(j.oldTree, changes)
	if err != nil {
		return nil, err
	}
	if empty {
		if newTree, err = j.o.write("tree", nil); err != nil {
			return nil, err
		}
	}
	j.newTree = newTree
	if j.born && j.newTree == j.oldTree && req.MergeParent == "" {
		return nil, nil
	}
	if err := r.writeCommitObject(ctx, j); err != nil {
		return nil, err
	}
	subject, _, _ := strings.Cut(j.msg, "\n")
	p := &Prepared{Ref: j.ref, Parent: headString(j.oldHash, j.born), Commit: j.newHash.String(), Changes: out,
		Subject: subject, author: req.Author, when: j.when}
	return p, nil
}

// LandSteps are the caller's parts of Land.
type LandSteps struct {
	// Journal records the write durably; it runs with index.lock held,
	// before the ref moves. An error stops Land with nothing changed.
	Journal func() error
	// Moved runs right after the ref moved (tests crash there).
	Moved func()
	// Checkout brings the worktree files to the commit. An error leaves
	// the ref moved and the index as it was: the journal finishes it.
	Checkout func() error
}

// Land puts a prepared commit on its branch (see the order above). It
// fails with ErrConcurrentUpdate, nothing changed, when the branch is no
// longer at p.Parent, and with ErrGitLocked when a git process holds
// index.lock or the ref's lock. Once the ref moved, an error says so.
func (r *Repo) Land(ctx context.Context, p *Prepared, steps LandSteps) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cleanupStaleLocks(r.gitDir)
	ilock, err := acquireLock(r.gitDir, r.indexPath(), "index")
	if err != nil {
		return err
	}
	defer ilock.release()
	if steps.Journal != nil {
		if err := steps.Journal(); err != nil {
			return err
		}
	}
	if testHookBeforeRefLock != nil {
		testHookBeforeRefLock()
	}
	if err := r.moveRefCAS(p); err != nil {
		return err
	}
	if steps.Moved != nil {
		steps.Moved()
	}
	if steps.Checkout != nil {
		if err := steps.Checkout(); err != nil {
			return fmt.Errorf("committed %.12s, but updating the files failed: %w", p.Commit, err)
		}
	}
	if err := r.writeIndexLocked(ilock, p.Changes, nil); err != nil {
		return fmt.Errorf("committed %.12s, but updating the index failed: %w", p.Commit, err)
	}
	return nil
}

// moveRefCAS moves p.Ref from p.Parent to p.Commit under <ref>.lock and
// appends the reflogs.
func (r *Repo) moveRefCAS(p *Prepared) error {
	rlock, err := acquireLock(r.gitDir, filepath.Join(r.gitDir, filepath.FromSlash(p.Ref)), refMarker(p.Ref))
	if err != nil {
		return err
	}
	defer rlock.release()
	cur, curOK, err := r.readRef(p.Ref)
	if err != nil {
		return err
	}
	if headString(cur, curOK) != p.Parent {
		return fmt.Errorf("git: %s moved from %s to %s while committing: %w", p.Ref, shortOr(p.Parent), shortOr(headString(cur, curOK)), ErrConcurrentUpdate)
	}
	if err := rlock.write([]byte(p.Commit + "\n")); err != nil {
		return err
	}
	if err := rlock.commit(); err != nil {
		return err
	}
	logMsg := "commit: " + p.Subject
	if p.Parent == "" {
		logMsg = "commit (initial): " + p.Subject
	}
	old := plumbing.ZeroHash
	if p.Parent != "" {
		old = plumbing.NewHash(p.Parent)
	}
	r.appendReflog(p.Ref, old, plumbing.NewHash(p.Commit), p.author, p.when, logMsg)
	return nil
}

func shortOr(h string) string {
	if h == "" {
		return "(unborn)"
	}
	return h
}

// SyncIndex records blobs in the index for paths a write changed, under
// index.lock, as Land does after its checkout: each change's entry is set
// to New (removed when New is ""), with stat data when the worktree file
// holds it, unless the entry holds a blob other than those in keepIf (a
// person staged their own content there: it stays).
func (r *Repo) SyncIndex(ctx context.Context, changes []Change, keepIf map[string][]string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cleanupStaleLocks(r.gitDir)
	ilock, err := acquireLock(r.gitDir, r.indexPath(), "index")
	if err != nil {
		return err
	}
	defer ilock.release()
	return r.writeIndexLocked(ilock, changes, keepIf)
}

// writeIndexLocked updates the index for changes (see SyncIndex; keepIf
// nil replaces every entry) into the held index.lock and renames it.
func (r *Repo) writeIndexLocked(ilock *lockFile, changes []Change, keepIf map[string][]string) error {
	ix, err := r.readIndex()
	if err != nil {
		if !errors.Is(err, errIndexCorrupt) {
			return err
		}
		o := r.newObjStore()
		tree, born, terr := r.headTree(o)
		if terr == nil && born {
			ix, err = r.indexFromTree(o, tree)
		} else if terr == nil {
			ix, err = &indexFile{version: 2}, nil
		}
		o.close()
		if err != nil {
			return err
		}
		if terr != nil {
			return terr
		}
	}
	if um := ix.unmerged(); len(um) > 0 {
		return fmt.Errorf("git: the index has unmerged paths (%s); resolve the conflict first: %w", strings.Join(um, ", "), ErrUnsupported)
	}
	ar := newAttrResolver(r)
	for _, c := range changes {
		tp, err := r.validatePath(c.Path)
		if err != nil {
			return err
		}
		if allowed, ok := keepIf[c.Path]; ok {
			cur := ""
			if e := ix.find(tp); e != nil {
				cur = plumbing.Hash(e.hash).String()
			}
			if !slices.Contains(allowed, cur) {
				continue
			}
		}
		if c.New == "" {
			ix.removeEntry(tp)
			ix.sort()
			continue
		}
		e := &idxEntry{name: tp, hash: plumbing.NewHash(c.New), mode: 0o100644}
		if c.Mode == modeExec {
			e.mode = 0o100755
		}
		if fi, h, ok := r.worktreeStat(ar, tp); ok && h == c.New {
			fillStat(e, fi)
		}
		if old := ix.find(tp); old != nil {
			e.flags = old.flags & flagAssumeValid
			e.xflags = old.xflags & xflagSkipWT
		}
		ix.setEntry(e)
		ix.sort() // find is a binary search
	}
	if err := ilock.write(ix.encode()); err != nil {
		return err
	}
	return ilock.commit()
}

// worktreeStat reads a worktree file and returns its stat data and the
// hash of the blob git would store for it; ok is false when it is missing
// or changed while read.
func (r *Repo) worktreeStat(ar *attrResolver, treePath string) (os.FileInfo, string, bool) {
	o := r.newObjStore()
	defer o.close()
	tree, _, err := r.headTree(o)
	if err != nil {
		return nil, "", false
	}
	wf, err := r.readWorktree(o, ar, tree, treePath, nil)
	if err != nil || wf.missing || wf.fi == nil {
		return nil, "", false
	}
	return wf.fi, wf.hash.String(), true
}

// WorktreeBlob returns the hash of the blob git would store for a
// memory-relative worktree file ("" when it is absent), normalised as a
// commit of it would be.
func (r *Repo) WorktreeBlob(ctx context.Context, p string) (string, error) {
	return r.worktreeBlob(ctx, p, false)
}

// StoreWorktreeBlob is WorktreeBlob that also writes the blob, fsynced.
func (r *Repo) StoreWorktreeBlob(ctx context.Context, p string) (string, error) {
	return r.worktreeBlob(ctx, p, true)
}

func (r *Repo) worktreeBlob(ctx context.Context, p string, store bool) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	tp, err := r.validatePath(p)
	if err != nil {
		return "", err
	}
	o := r.newObjStore()
	defer o.close()
	tree, _, err := r.headTree(o)
	if err != nil {
		return "", err
	}
	wf, err := r.readWorktree(o, newAttrResolver(r), tree, tp, nil)
	if err != nil || wf.missing {
		return "", err
	}
	if !store {
		return wf.hash.String(), nil
	}
	if _, err := o.write("blob", wf.data); err != nil {
		return "", err
	}
	return wf.hash.String(), o.syncDirs()
}

// BlobHash returns the hash of the blob git would store for data at the
// memory-relative path p ("" for nil data).
func (r *Repo) BlobHash(p string, data []byte) (string, error) {
	if data == nil {
		return "", nil
	}
	tp, err := r.validatePath(p)
	if err != nil {
		return "", err
	}
	conv, err := newAttrResolver(r).conversion(tp)
	if err != nil {
		return "", err
	}
	o := r.newObjStore()
	defer o.close()
	tree, born, err := r.headTree(o)
	if err != nil {
		return "", err
	}
	norm := normalize(conv, data, func() bool {
		if !born {
			return false
		}
		e, ok, err := o.lookup(tree, tp)
		if err != nil || !ok || e.isTree() {
			return false
		}
		_, b, err := o.read(e.hash)
		return err == nil && bytes.Contains(b, []byte("\r\n"))
	})
	return hashObject("blob", norm).String(), nil
}

// ReadBlob returns a blob's content.
func (r *Repo) ReadBlob(ctx context.Context, hash string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !plumbing.IsHash(hash) {
		return nil, fmt.Errorf("git: %q is not an object hash", hash)
	}
	o := r.newObjStore()
	defer o.close()
	typ, b, err := o.read(plumbing.NewHash(hash))
	if err != nil {
		return nil, err
	}
	if typ != plumbing.BlobObject {
		return nil, fmt.Errorf("git: %s is a %s, not a blob", hash, typ)
	}
	return b, nil
}

// BlobAt returns the blob of a memory-relative path in a commit ("" when
// absent; commit "" is the unborn branch).
func (r *Repo) BlobAt(ctx context.Context, commit, p string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if commit == "" {
		return "", nil
	}
	tp, err := r.validatePath(p)
	if err != nil {
		return "", err
	}
	o := r.newObjStore()
	defer o.close()
	tree, err := o.commitTree(plumbing.NewHash(commit))
	if err != nil {
		return "", err
	}
	e, ok, err := o.lookup(tree, tp)
	if err != nil || !ok || e.isTree() {
		return "", err
	}
	return e.hash.String(), nil
}

// IsAncestor reports whether commit anc is desc or one of its ancestors,
// looking at most limit commits back from desc.
func (r *Repo) IsAncestor(ctx context.Context, anc, desc string, limit int) (bool, error) {
	if anc == "" || desc == "" {
		return false, nil
	}
	o := r.newObjStore()
	defer o.close()
	seen := map[string]bool{}
	queue := []string{desc}
	for len(queue) > 0 && len(seen) < limit {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		h := queue[0]
		queue = queue[1:]
		if seen[h] {
			continue
		}
		seen[h] = true
		if h == anc {
			return true, nil
		}
		typ, b, err := o.read(plumbing.NewHash(h))
		if err != nil {
			return false, err
		}
		if typ != plumbing.CommitObject {
			return false, fmt.Errorf("git: %s is a %s, not a commit", h, typ)
		}
		header, _, _ := bytes.Cut(b, []byte("\n\n"))
		for _, line := range strings.Split(string(header), "\n") {
			if ph, ok := strings.CutPrefix(line, "parent "); ok && plumbing.IsHash(ph) {
				queue = append(queue, ph)
			}
		}
	}
	return false, nil
}

// ReflogHas reports whether the branch's reflog records it ever pointing
// at commit.
func (r *Repo) ReflogHas(ref, commit string) bool {
	if !validRefPath(ref) || commit == "" {
		return false
	}
	b, err := os.ReadFile(filepath.Join(r.gitDir, "logs", filepath.FromSlash(ref)))
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[1] == commit {
			return true
		}
	}
	return false
}

// PrepareFastForward prepares moving the branch from base to target, a
// commit that already exists and has base in its history (memctl sync
// taking the remote's commits): Land then brings the files to it the same
// way it does for a commit memctl made. It refuses when HEAD is not base.
func (r *Repo) PrepareFastForward(ctx context.Context, base, target string) (*Prepared, error) {
	return r.prepareMove(ctx, base, target, true)
}

// PrepareSwitch is PrepareFastForward to a target that does not hold
// base: a history another machine rewrote and declared (a published
// history purge), taken by a copy that has nothing of its own to keep.
func (r *Repo) PrepareSwitch(ctx context.Context, base, target string) (*Prepared, error) {
	return r.prepareMove(ctx, base, target, false)
}

func (r *Repo) prepareMove(ctx context.Context, base, target string, forward bool) (*Prepared, error) {
	j := &commitJob{req: PrepareRequest{Base: base}}
	if err := r.checkCommitBase(ctx, j); err != nil {
		return nil, err
	}
	if !plumbing.IsHash(target) {
		return nil, fmt.Errorf("git: %q is not a commit hash", target)
	}
	if base != "" && forward {
		ok, err := r.Contains(ctx, target, base)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("git: %.12s is not in the history of %.12s: not a fast-forward", base, target)
		}
	}
	changes, err := r.ChangedPaths(ctx, base, target)
	if err != nil {
		return nil, err
	}
	for _, c := range changes {
		if _, err := r.validatePath(c.Path); err != nil {
			return nil, err
		}
	}
	return &Prepared{Ref: j.ref, Parent: base, Commit: target, Changes: changes,
		Subject: "fast-forward to " + shortOr(target), author: MemctlSignature, when: time.Now()}, nil
}
