package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

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
	// Read into a buffer of the file's size, not one grown by copies.
	buf := bytes.NewBuffer(make([]byte, 0, int((*fi).Size())+bytes.MinRead))
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, err
	}
	data := buf.Bytes()
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

// commitJob is one commit in the making, passed between the steps of
// Prepare: the branch and the commit it builds on, the trees, the files,
// and the new commit.
type commitJob struct {
	req     PrepareRequest
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

// checkCommitBase refuses to commit during a merge or on top of a HEAD
// other than the planned base, and records the branch and the commit the
// job builds on.
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
	if headString(j.oldHash, j.born) != j.req.Base {
		return fmt.Errorf("git: HEAD is %s, not %s as planned: %w", headString(j.oldHash, j.born), j.req.Base, ErrConcurrentUpdate)
	}
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
	if j.req.MergeParent != "" {
		fmt.Fprintf(&cb, "parent %s\n", j.req.MergeParent)
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
