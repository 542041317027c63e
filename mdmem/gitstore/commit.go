package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// CommitRequest describes one memctl commit.
type CommitRequest struct {
	// Paths are memory-dir-relative slash paths ("MEMORY.md",
	// "topics/db.md"). A listed path whose file no longer exists in the
	// worktree is removed from the tree. Paths must be clean, relative,
	// without "..", and must not lead through a symlink.
	Paths []string
	// Message is the full commit message including trailers.
	Message string
	// Author is the author and committer; zero means MemctlSignature.
	Author Signature
	// When is the author and committer date; zero means now.
	When time.Time
	// CheckBase makes the commit conditional: it fails with
	// ErrConcurrentUpdate unless HEAD is Base ("" = an unborn branch)
	// when the ref is locked. A write transaction planned on Base never
	// lands on top of commits it has not seen.
	CheckBase bool
	Base      string
	// Contents, by path of Paths, commits these bytes instead of the
	// worktree's (which stays as it is, and shows as modified): a write
	// whose file a person edited on top of it is committed as planned,
	// the person's bytes then as their own commit.
	Contents map[string][]byte
}

// commitLockWait is how long Commit waits for memctl.lock when the caller
// did not take it.
var commitLockWait = 10 * time.Second

// testHookBeforeRefLock lets tests move the branch inside the commit window.
var testHookBeforeRefLock func()

// validatePath checks a memory-relative path and returns its tree path.
func (r *Repo) validatePath(p string) (string, error) {
	bad := func(why string) (string, error) {
		return "", fmt.Errorf("git: invalid memory path %q: %s", p, why)
	}
	switch {
	case p == "":
		return bad("empty")
	case strings.ContainsAny(p, "\x00\\\n\r"):
		return bad("contains NUL, backslash or newline")
	case strings.HasPrefix(p, "/") || filepath.IsAbs(p) || filepath.VolumeName(p) != "":
		return bad("absolute")
	case path.Clean(p) != p || p == ".":
		return bad("not a clean relative path")
	}
	for _, c := range strings.Split(p, "/") {
		if c == ".." {
			return bad(`contains ".."`)
		}
		if strings.EqualFold(c, ".git") {
			return bad(`contains ".git"`)
		}
	}
	if r.prefix == "" {
		return p, nil
	}
	return r.prefix + "/" + p, nil
}

// lstatInRepo lstats a tree path after making sure no directory on the way
// is a symlink (git refuses paths "beyond a symbolic link"; a symlinked
// directory could also point outside the repository). missing is true when
// the file or a parent does not exist.
func (r *Repo) lstatInRepo(treePath string) (fi os.FileInfo, missing bool, err error) {
	parts := strings.Split(treePath, "/")
	cur := r.root
	for i, c := range parts {
		cur = filepath.Join(cur, c)
		fi, err := os.Lstat(cur)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) || isNotDir(err) {
				return nil, true, nil
			}
			return nil, false, err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			if i == len(parts)-1 {
				return nil, false, fmt.Errorf("git: %s is a symbolic link; memory files must be regular files", treePath)
			}
			return nil, false, fmt.Errorf("git: %s: %s is a symbolic link; memory paths must not lead through symlinks",
				treePath, strings.Join(parts[:i+1], "/"))
		}
		if i < len(parts)-1 && !fi.IsDir() {
			return nil, true, nil
		}
		if i == len(parts)-1 {
			if !fi.Mode().IsRegular() {
				return nil, false, fmt.Errorf("git: %s is not a regular file", treePath)
			}
			return fi, false, nil
		}
	}
	return nil, true, nil
}

// readWhole reads a worktree file; *fi is cleared when the file was
// replaced or modified while it was read (the index must then not vouch
// for its stat data).
func readWhole(full string, fi *os.FileInfo) ([]byte, error) {
	f, err := os.Open(full)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	after, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !os.SameFile(*fi, after) || after.Size() != int64(len(data)) || !after.ModTime().Equal((*fi).ModTime()) {
		*fi = nil
	}
	return data, nil
}

// worktreeFile is the committed state of one path.
type worktreeFile struct {
	treePath string
	missing  bool
	mode     string
	data     []byte // normalised content
	hash     plumbing.Hash
	fi       os.FileInfo
}

// readWorktree reads a file for committing, normalised like git would;
// override, when not nil, stands for the worktree content (and the index
// then has no stat data for it).
func (r *Repo) readWorktree(o *objStore, ar *attrResolver, headTree plumbing.Hash, treePath string, override []byte) (*worktreeFile, error) {
	fi, missing, err := r.lstatInRepo(treePath)
	if err != nil {
		return nil, err
	}
	if override != nil {
		fi, missing = nil, false
	}
	wf := &worktreeFile{treePath: treePath, missing: missing}
	if missing {
		return wf, nil
	}
	conv, err := ar.conversion(treePath)
	if err != nil {
		return nil, err
	}
	full := filepath.Join(r.root, filepath.FromSlash(treePath))
	var data []byte
	if override != nil {
		data = override
	} else {
		data, err = readWhole(full, &fi)
	}
	if err != nil {
		return nil, err
	}
	headEnt, headOK, err := o.lookup(headTree, treePath)
	if err != nil {
		return nil, err
	}
	wf.data = normalize(conv, data, func() bool {
		if !headOK || headEnt.isTree() {
			return false
		}
		_, b, err := o.read(headEnt.hash)
		return err == nil && bytes.Contains(b, []byte("\r\n"))
	})
	wf.fi = fi
	if r.cfg.fileMode() {
		wf.mode = modeBlob
		if info, err := os.Lstat(full); err == nil && info.Mode()&0o111 != 0 {
			wf.mode = modeExec
		}
	} else {
		wf.mode = modeBlob
		if headOK && headEnt.mode == modeExec {
			wf.mode = modeExec
		}
	}
	wf.hash = hashObject("blob", wf.data)
	return wf, nil
}

func checkSignature(s Signature) error {
	for _, v := range []string{s.Name, s.Email} {
		if strings.ContainsAny(v, "<>\n\r\x00") {
			return fmt.Errorf("git: invalid signature %q <%s>: must not contain <, > or newlines", s.Name, s.Email)
		}
	}
	if strings.TrimSpace(s.Name) == "" {
		return errors.New("git: signature name is empty")
	}
	return nil
}

// Commit records the current worktree content of exactly req.Paths on top
// of HEAD (or as the root commit on an unborn branch) and returns the new
// commit hash; it returns "" and no error when those paths already equal
// HEAD. Other index entries (a person's staged changes) are left as they
// are. The caller should hold Lock; if it does not, Commit takes it for the
// duration (waiting up to 10s).
//
// Order of durable steps: objects are written and fsynced; index.lock and
// then <ref>.lock are taken (git's protocol; a lock held by a git process
// makes Commit fail before anything visible changed); the ref is compared
// with the commit we built on (packed-refs included); the new index and ref
// are written into their lock files and fsynced; index.lock is renamed
// first, then the ref lock; directories are fsynced; reflogs are appended.
// A crash between the two renames leaves an index that already contains
// memctl's new blobs (shown as staged by git status) and which the next
// Commit finishes; it never leaves an index that would revert the commit.
func (r *Repo) Commit(ctx context.Context, req CommitRequest) (hash string, err error) {
	if len(req.Paths) == 0 {
		return "", errors.New("git: commit: no paths")
	}
	if strings.TrimSpace(req.Message) == "" {
		return "", errors.New("git: commit: empty message")
	}
	if req.Author == (Signature{}) {
		req.Author = MemctlSignature
	}
	if err := checkSignature(req.Author); err != nil {
		return "", err
	}
	treePaths := make([]string, 0, len(req.Paths))
	seen := map[string]bool{}
	overrides := map[string][]byte{}
	for _, p := range req.Paths {
		tp, err := r.validatePath(p)
		if err != nil {
			return "", err
		}
		if data, ok := req.Contents[p]; ok {
			overrides[tp] = data
		}
		if !seen[tp] {
			seen[tp] = true
			treePaths = append(treePaths, tp)
		}
	}
	sort.Strings(treePaths)
	err = r.withLock(ctx, commitLockWait, func() error {
		var err error
		hash, err = r.commitLocked(ctx, req, treePaths, overrides)
		return err
	})
	return hash, err
}

// commitJob is one commit in the making, passed between the steps of
// commitLocked: the branch and the commit it builds on, the trees, the
// worktree files, and the new commit.
type commitJob struct {
	req     CommitRequest
	o       *objStore
	ref     string
	oldHash plumbing.Hash
	born    bool // the branch has a commit (oldHash)
	oldTree plumbing.Hash
	newTree plumbing.Hash
	files   []*worktreeFile
	msg     string
	when    time.Time
	newHash plumbing.Hash
}

// commitLocked makes the commit under memctl.lock, in the order of
// durable steps documented on Commit.
func (r *Repo) commitLocked(ctx context.Context, req CommitRequest, treePaths []string, overrides map[string][]byte) (string, error) {
	j := &commitJob{req: req}
	if err := r.checkCommitBase(ctx, j); err != nil {
		return "", err
	}
	j.o = r.newObjStore()
	defer j.o.close()
	if j.born {
		var err error
		if j.oldTree, err = j.o.commitTree(j.oldHash); err != nil {
			return "", err
		}
	}
	if err := r.writeTree(ctx, j, treePaths, overrides); err != nil {
		return "", err
	}
	if j.born && j.newTree == j.oldTree {
		return "", nil
	}
	if err := r.writeCommitObject(ctx, j); err != nil {
		return "", err
	}
	if err := r.publish(j); err != nil {
		return "", err
	}
	return j.newHash.String(), nil
}

// checkCommitBase refuses to commit during a merge or (with
// req.CheckBase) on top of a HEAD other than the planned base, and
// records the branch and the commit the job builds on.
func (r *Repo) checkCommitBase(ctx context.Context, j *commitJob) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cleanupStaleLocks(r.gitDir)
	if _, err := os.Stat(filepath.Join(r.gitDir, "MERGE_HEAD")); err == nil {
		return fmt.Errorf("git: a merge is in progress (MERGE_HEAD exists); finish or abort it first: %w", ErrUnsupported)
	}
	var err error
	j.ref, j.oldHash, j.born, err = r.head()
	if err != nil {
		return err
	}
	if j.req.CheckBase && headString(j.oldHash, j.born) != j.req.Base {
		return fmt.Errorf("git: HEAD is %s, not %s as planned: %w", headString(j.oldHash, j.born), j.req.Base, ErrConcurrentUpdate)
	}
	return nil
}

// writeTree reads the worktree files of treePaths (or their overrides),
// writes their blobs and the new tree (objects only, nothing visible).
func (r *Repo) writeTree(ctx context.Context, j *commitJob, treePaths []string, overrides map[string][]byte) error {
	ar := newAttrResolver(r)
	j.files = make([]*worktreeFile, 0, len(treePaths))
	changes := map[string]change{}
	for _, tp := range treePaths {
		if err := ctx.Err(); err != nil {
			return err
		}
		wf, err := r.readWorktree(j.o, ar, j.oldTree, tp, overrides[tp])
		if err != nil {
			return err
		}
		j.files = append(j.files, wf)
		if wf.missing {
			changes[tp] = change{del: true}
		} else {
			changes[tp] = change{mode: wf.mode, hash: wf.hash}
		}
	}
	// Write blobs that changed (unchanged ones exist already).
	for _, wf := range j.files {
		if wf.missing {
			continue
		}
		if _, err := j.o.write("blob", wf.data); err != nil {
			return err
		}
	}
	newTree, empty, err := j.o.updateTree(j.oldTree, changes)
	if err != nil {
		return err
	}
	if empty {
		if newTree, err = j.o.write("tree", nil); err != nil {
			return err
		}
	}
	j.newTree = newTree
	return nil
}

// writeCommitObject runs the commit hooks on the message, writes the
// (signed, if configured) commit object and fsyncs the object
// directories.
func (r *Repo) writeCommitObject(ctx context.Context, j *commitJob) error {
	sign, err := r.signer()
	if err != nil {
		return err
	}
	j.when = j.req.When
	if j.when.IsZero() {
		j.when = time.Now()
	}
	j.msg, err = r.runCommitHooks(ctx, j.o, j.oldTree, j.files, strings.TrimRight(j.req.Message, " \t\r\n")+"\n")
	if err != nil {
		return err
	}
	var cb strings.Builder
	fmt.Fprintf(&cb, "tree %s\n", j.newTree)
	if j.born {
		fmt.Fprintf(&cb, "parent %s\n", j.oldHash)
	}
	sig := formatSig(j.req.Author, j.when)
	fmt.Fprintf(&cb, "author %s\ncommitter %s\n\n%s", sig, sig, j.msg)
	payload := []byte(cb.String())
	if sign != nil {
		s, err := sign(ctx, payload)
		if err != nil {
			return err
		}
		payload = withSignature(payload, s)
	}
	if j.newHash, err = j.o.write("commit", payload); err != nil {
		return err
	}
	return j.o.syncDirs()
}

// publish makes the commit visible: index.lock and then the ref lock are
// taken (as git commit does), the ref is compared with the commit the job
// built on, the new index and ref are written into their lock files and
// fsynced, index.lock is renamed first, then the ref lock, and the reflogs
// are appended.
func (r *Repo) publish(j *commitJob) error {
	ilock, err := acquireLock(r.gitDir, r.indexPath(), "index")
	if err != nil {
		return err
	}
	defer ilock.release()
	ix, err := r.commitIndex(j)
	if err != nil {
		return err
	}
	if testHookBeforeRefLock != nil {
		testHookBeforeRefLock()
	}
	rlock, err := acquireLock(r.gitDir, filepath.Join(r.gitDir, filepath.FromSlash(j.ref)), refMarker(j.ref))
	if err != nil {
		return err
	}
	defer rlock.release()
	cur, curOK, err := r.readRef(j.ref)
	if err != nil {
		return err
	}
	if curOK != j.born || cur != j.oldHash {
		return fmt.Errorf("git: %s moved from %s to %s while committing: %w", j.ref, j.oldHash, cur, ErrConcurrentUpdate)
	}
	setIndexEntries(ix, j.files)
	if err := ilock.writeNoSync(ix.encode()); err != nil {
		return err
	}
	if err := rlock.writeNoSync([]byte(j.newHash.String() + "\n")); err != nil {
		return err
	}
	if err := ilock.sync(); err != nil {
		return err
	}
	if err := rlock.sync(); err != nil {
		return err
	}
	if err := ilock.commit(); err != nil {
		return err
	}
	if err := rlock.commit(); err != nil {
		return err
	}
	subject, _, _ := strings.Cut(j.msg, "\n")
	logMsg := "commit: " + subject
	if !j.born {
		logMsg = "commit (initial): " + subject
	}
	r.appendReflog(j.ref, j.oldHash, j.newHash, j.req.Author, j.when, logMsg)
	return nil
}

// commitIndex reads the index to update (the caller holds index.lock),
// rebuilding it from the commit the job builds on when it is corrupt
// (it is derived state), and refuses an index with unmerged paths.
func (r *Repo) commitIndex(j *commitJob) (*indexFile, error) {
	ix, err := r.readIndex()
	if err != nil {
		if !errors.Is(err, errIndexCorrupt) {
			return nil, err
		}
		if ix, err = r.indexFromTree(j.o, j.oldTree); err != nil {
			return nil, err
		}
	}
	if um := ix.unmerged(); len(um) > 0 {
		return nil, fmt.Errorf("git: the index has unmerged paths (%s); resolve the conflict first: %w",
			strings.Join(um, ", "), ErrUnsupported)
	}
	return ix, nil
}

// setIndexEntries records the committed files in the index (stat data
// included, so git status needs no rehash) and removes the deleted ones,
// keeping the assume-valid and skip-worktree bits of existing entries.
func setIndexEntries(ix *indexFile, files []*worktreeFile) {
	for _, wf := range files {
		if wf.missing {
			ix.removeEntry(wf.treePath)
			continue
		}
		e := &idxEntry{name: wf.treePath, hash: wf.hash}
		e.mode = 0o100644
		if wf.mode == modeExec {
			e.mode = 0o100755
		}
		if wf.fi != nil {
			fillStat(e, wf.fi)
		}
		if old := ix.find(wf.treePath); old != nil {
			e.flags = old.flags & flagAssumeValid
			e.xflags = old.xflags & xflagSkipWT
		}
		ix.setEntry(e)
		ix.sort()
	}
}

// commitTree returns the tree of a commit.
func (o *objStore) commitTree(h plumbing.Hash) (plumbing.Hash, error) {
	typ, b, err := o.read(h)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	if typ != plumbing.CommitObject {
		return plumbing.ZeroHash, fmt.Errorf("git: %s is a %s, not a commit", h, typ)
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	t, ok := bytes.CutPrefix(line, []byte("tree "))
	if !ok || !plumbing.IsHash(string(t)) {
		return plumbing.ZeroHash, fmt.Errorf("git: commit %s is corrupt", h)
	}
	return plumbing.NewHash(string(t)), nil
}

// indexFromTree builds an index for a tree. Stat data is filled in for
// worktree files whose content matches (so git status needs no rehash);
// other entries get zero stat data, which makes git re-check them.
func (r *Repo) indexFromTree(o *objStore, tree plumbing.Hash) (*indexFile, error) {
	ix := &indexFile{version: 2}
	ar := newAttrResolver(r)
	enter := func(plumbing.Hash, string) (bool, error) { return true, nil }
	file := func(p string, e treeEntry) error {
		var m uint32
		if _, err := fmt.Sscanf(e.mode, "%o", &m); err != nil {
			return fmt.Errorf("git: bad mode %q in tree", e.mode)
		}
		ie := &idxEntry{name: p, hash: e.hash, mode: m}
		if e.mode == modeBlob || e.mode == modeExec {
			if wf, err := r.readWorktree(o, ar, tree, p, nil); err == nil && !wf.missing && wf.hash == e.hash && wf.fi != nil {
				fillStat(ie, wf.fi)
			}
		}
		ix.entries = append(ix.entries, ie)
		return nil
	}
	if err := o.walkTree(tree, "", enter, file); err != nil {
		return nil, err
	}
	ix.sort()
	return ix, nil
}
