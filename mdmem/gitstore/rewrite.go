package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/storer"
)

// Rewrite says how RewriteHistory changes objects. Blob gets every blob
// with its tree path and returns the new content and whether it changed;
// Message gets every commit message likewise.
type Rewrite struct {
	Blob    func(path string, data []byte) ([]byte, bool)
	Message func(msg string) (string, bool)
}

// RewriteResult is what RewriteHistory did.
type RewriteResult struct {
	Commits int               `json:"commits_rewritten"`
	Refs    map[string]string `json:"refs"` // ref → new commit, for the refs that moved
	// FirstChanged are the original commits rewritten whose parents were
	// kept: where the rewritten history starts to differ.
	FirstChanged []string `json:"first_changed"`
	// Unsigned counts rewritten commits whose signature was dropped (a
	// signature covers the old bytes and cannot be kept; with
	// commit.gpgsign the rewritten commits are signed anew, as git rebase
	// does).
	Unsigned int `json:"signatures_dropped,omitempty"`
}

// refInfo is one ref and the object it names.
type refInfo struct {
	name string
	hash plumbing.Hash
}

// listRefs returns every ref under refs/ (loose files over packed-refs),
// sorted by name.
func (r *Repo) listRefs() ([]refInfo, error) {
	seen := map[string]plumbing.Hash{}
	root := filepath.Join(r.gitDir, "refs")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".lock") {
			return err
		}
		rel, _ := filepath.Rel(r.gitDir, p)
		name := filepath.ToSlash(rel)
		h, ok, err := r.readRef(name)
		if err != nil {
			return err
		}
		if ok {
			seen[name] = h
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	err = r.eachPackedRef(func(name string, h plumbing.Hash) bool {
		if _, loose := seen[name]; !loose {
			seen[name] = h
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	out := make([]refInfo, 0, len(seen))
	for n, h := range seen {
		out = append(out, refInfo{n, h})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// rewriter memoises the rewrite of trees, blobs and commits.
type rewriter struct {
	o       *objStore
	rw      Rewrite
	trees   map[string]plumbing.Hash // dir + "\x00" + old tree → new tree
	blobs   map[string]plumbing.Hash // path + "\x00" + old blob → new blob
	commits map[plumbing.Hash]plumbing.Hash
	res     *RewriteResult
	ctx     context.Context
	sign    func(ctx context.Context, payload []byte) (string, error) // commit.gpgsign
}

func (w *rewriter) tree(ctx context.Context, h plumbing.Hash, dir string) (plumbing.Hash, error) {
	key := dir + "\x00" + h.String()
	if n, ok := w.trees[key]; ok {
		return n, nil
	}
	if err := ctx.Err(); err != nil {
		return h, err
	}
	ents, err := w.o.readTree(h)
	if err != nil {
		return h, err
	}
	changed := false
	for i, e := range ents {
		p := treePath(dir, e.name)
		var nh plumbing.Hash
		switch {
		case e.isTree():
			nh, err = w.tree(ctx, e.hash, p)
		case e.mode == modeGitlnk:
			nh = e.hash
		default:
			nh, err = w.blob(e.hash, p)
		}
		if err != nil {
			return h, err
		}
		if nh != e.hash {
			ents[i].hash, changed = nh, true
		}
	}
	n := h
	if changed {
		if n, err = w.o.write("tree", encodeTree(ents)); err != nil {
			return h, err
		}
	}
	w.trees[key] = n
	return n, nil
}

func (w *rewriter) blob(h plumbing.Hash, p string) (plumbing.Hash, error) {
	key := p + "\x00" + h.String()
	if n, ok := w.blobs[key]; ok {
		return n, nil
	}
	_, data, err := w.o.read(h)
	if err != nil {
		return h, err
	}
	n := h
	if nd, ok := w.rw.Blob(p, data); ok {
		if n, err = w.o.write("blob", nd); err != nil {
			return h, err
		}
	}
	w.blobs[key] = n
	return n, nil
}

// commit rewrites a commit and its ancestors (iteratively, parents first).
func (w *rewriter) commit(ctx context.Context, start plumbing.Hash) (plumbing.Hash, error) {
	stack := []plumbing.Hash{start}
	for len(stack) > 0 {
		h := stack[len(stack)-1]
		if _, ok := w.commits[h]; ok {
			stack = stack[:len(stack)-1]
			continue
		}
		typ, raw, err := w.o.read(h)
		if err != nil {
			return h, err
		}
		if typ != plumbing.CommitObject {
			return h, fmt.Errorf("git: %s is a %s, not a commit", h, typ)
		}
		head, msg, _ := bytes.Cut(raw, []byte("\n\n"))
		lines := strings.Split(string(head), "\n")
		var pending []plumbing.Hash
		for _, l := range lines {
			if p, ok := strings.CutPrefix(l, "parent "); ok {
				ph := plumbing.NewHash(p)
				if _, done := w.commits[ph]; !done {
					pending = append(pending, ph)
				}
			}
		}
		if len(pending) > 0 {
			stack = append(stack, pending...)
			continue
		}
		stack = stack[:len(stack)-1]
		var b strings.Builder
		changed, parentsKept, signed := false, true, false
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			switch {
			case strings.HasPrefix(l, "tree "):
				nt, err := w.tree(ctx, plumbing.NewHash(l[5:]), "")
				if err != nil {
					return h, err
				}
				changed = changed || nt.String() != l[5:]
				l = "tree " + nt.String()
			case strings.HasPrefix(l, "parent "):
				np := w.commits[plumbing.NewHash(l[7:])]
				if np.String() != l[7:] {
					changed, parentsKept = true, false
				}
				l = "parent " + np.String()
			case strings.HasPrefix(l, "gpgsig ") || strings.HasPrefix(l, "gpgsig-sha256 "):
				signed = true
				for i+1 < len(lines) && strings.HasPrefix(lines[i+1], " ") {
					i++
				}
				continue // re-added below if the commit stays as it was
			}
			b.WriteString(l)
			b.WriteByte('\n')
		}
		nm, mchanged := w.rw.Message(string(msg))
		if !changed && !mchanged {
			w.commits[h] = h
			continue
		}
		payload := []byte(b.String() + "\n" + nm)
		if w.sign != nil {
			sig, err := w.sign(w.ctx, payload)
			if err != nil {
				return h, err
			}
			payload = withSignature(payload, sig)
		} else if signed {
			w.res.Unsigned++
		}
		n, err := w.o.write("commit", payload)
		if err != nil {
			return h, err
		}
		w.commits[h] = n
		w.res.Commits++
		if parentsKept {
			w.res.FirstChanged = append(w.res.FirstChanged, h.String())
		}
	}
	return w.commits[start], nil
}

// reachable calls fn for every commit reachable from h.
func (o *objStore) reachable(h plumbing.Hash, fn func(plumbing.Hash) bool) error {
	seen := map[plumbing.Hash]bool{}
	stack := []plumbing.Hash{h}
	for len(stack) > 0 {
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[c] {
			continue
		}
		seen[c] = true
		if !fn(c) {
			return nil
		}
		_, raw, err := o.read(c)
		if err != nil {
			return err
		}
		head, _, _ := bytes.Cut(raw, []byte("\n\n"))
		for _, l := range strings.Split(string(head), "\n") {
			if p, ok := strings.CutPrefix(l, "parent "); ok {
				stack = append(stack, plumbing.NewHash(p))
			}
		}
	}
	return nil
}

// RewriteHistory rewrites every branch (refs/heads/*) and lightweight tag
// whose history holds an object the rewrite changes, keeping every commit
// before the first change as it is, and moves those refs with git's lock
// protocol (reflog lines appended). It refuses, changing no ref, when HEAD
// is detached, when HEAD's own tree would change (the index and worktree
// would then disagree with the branch), or when another ref (remote-
// tracking branches, the stash, notes, annotated tags) reaches a changed
// commit: those are copies memctl must not rewrite, and it names them.
// The caller holds Lock.
func (r *Repo) RewriteHistory(ctx context.Context, rw Rewrite, who Signature, when time.Time) (*RewriteResult, error) {
	ref, head, born, err := r.head()
	if err != nil {
		return nil, err
	}
	if !born {
		return &RewriteResult{}, nil
	}
	refs, err := r.listRefs()
	if err != nil {
		return nil, err
	}
	sign, err := r.signer()
	if err != nil {
		return nil, err
	}
	o := r.newObjStore()
	defer o.close()
	res := &RewriteResult{Refs: map[string]string{}}
	w := &rewriter{o: o, rw: rw, trees: map[string]plumbing.Hash{}, blobs: map[string]plumbing.Hash{},
		commits: map[plumbing.Hash]plumbing.Hash{}, res: res, ctx: ctx, sign: sign}
	var move []refInfo
	var others []string
	for _, ri := range refs {
		typ, _, err := o.read(ri.hash)
		if err != nil {
			return nil, fmt.Errorf("git: ref %s: %w", ri.name, err)
		}
		own := typ == plumbing.CommitObject && (strings.HasPrefix(ri.name, "refs/heads/") || strings.HasPrefix(ri.name, "refs/tags/"))
		if !own {
			if typ == plumbing.CommitObject || typ == plumbing.TagObject {
				others = append(others, ri.name)
			}
			continue
		}
		n, err := w.commit(ctx, ri.hash)
		if err != nil {
			return nil, err
		}
		if n != ri.hash {
			move = append(move, refInfo{ri.name, n})
		}
	}
	if len(move) == 0 {
		return res, nil
	}
	// A ref memctl does not rewrite must not reach a changed commit.
	var blocked []string
	for _, name := range others {
		h, _, err := r.readRef(name)
		if err != nil {
			return nil, err
		}
		h = o.peel(h)
		hit := false
		if err := o.reachable(h, func(c plumbing.Hash) bool {
			if n, ok := w.commits[c]; ok && n != c {
				hit = true
				return false
			}
			if _, ok := w.commits[c]; ok {
				return true
			}
			// not reached by any rewritten branch: rewrite it to see
			n, err := w.commit(ctx, c)
			if err == nil && n != c {
				hit = true
				return false
			}
			return true
		}); err != nil {
			return nil, err
		}
		if hit {
			blocked = append(blocked, name)
		}
	}
	if len(blocked) > 0 {
		return nil, fmt.Errorf("%w: %s also hold the text and are not memctl's to rewrite (remote-tracking branches, the stash, notes, annotated tags); nothing was rewritten", ErrForeignRefs, strings.Join(blocked, ", "))
	}
	oldTree, err := o.commitTree(head)
	if err != nil {
		return nil, err
	}
	newTree, err := o.commitTree(w.commits[head])
	if err != nil {
		return nil, err
	}
	if oldTree != newTree {
		return nil, fmt.Errorf("git: the current files of %s still hold the text; remove it there first (commit), then purge", ref)
	}
	if err := o.syncDirs(); err != nil {
		return nil, err
	}
	for _, m := range move {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		old := refs[sort.Search(len(refs), func(i int) bool { return refs[i].name >= m.name })].hash
		if err := r.moveRef(m.name, old, m.hash, who, when, "memctl: purge history"); err != nil {
			return res, err
		}
		res.Refs[m.name] = m.hash.String()
	}
	sort.Strings(res.FirstChanged)
	return res, nil
}

// ErrForeignRefs is returned (wrapped) by RewriteHistory when refs it does
// not rewrite hold changed history.
var ErrForeignRefs = errors.New("refusing to rewrite history")

// moveRef sets ref from old to nw with git's lock protocol.
func (r *Repo) moveRef(ref string, old, nw plumbing.Hash, who Signature, when time.Time, msg string) error {
	l, err := acquireLock(r.gitDir, filepath.Join(r.gitDir, filepath.FromSlash(ref)), refMarker(ref))
	if err != nil {
		return err
	}
	defer l.release()
	cur, ok, err := r.readRef(ref)
	if err != nil {
		return err
	}
	if !ok || cur != old {
		return fmt.Errorf("git: %s moved from %s to %s while rewriting: %w", ref, old, cur, ErrConcurrentUpdate)
	}
	if err := l.write([]byte(nw.String() + "\n")); err != nil {
		return err
	}
	if err := l.commit(); err != nil {
		return err
	}
	r.appendReflog(ref, old, nw, who, when, msg)
	return nil
}

// Dirty returns the tracked paths whose worktree or index content differs
// from HEAD, and whether an operation (merge, rebase, cherry-pick, …) is
// in progress, using the git CLI (see PurgeUnreachable).
func (r *Repo) Dirty(ctx context.Context) ([]string, error) {
	for _, f := range []string{"MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD", "rebase-merge", "rebase-apply", "BISECT_LOG"} {
		if _, err := os.Stat(filepath.Join(r.gitDir, f)); err == nil {
			return []string{f + " (an operation is in progress)"}, nil
		}
	}
	out, err := r.git(ctx, "status", "--porcelain", "--untracked-files=no", "--ignore-submodules=none")
	if err != nil {
		return nil, err
	}
	var dirty []string
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if len(l) > 3 {
			dirty = append(dirty, strings.TrimSpace(l[3:]))
		}
	}
	return dirty, nil
}

// git runs the git CLI in the worktree root.
func (r *Repo) git(ctx context.Context, args ...string) (string, error) {
	path, err := exec.LookPath("git")
	if err != nil {
		return "", fmt.Errorf("git: purging history needs the git program (for reflog expire and gc), which is not on PATH: %w", err)
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Dir = r.root
	cmd.Env = append(os.Environ(), "GIT_DIR="+r.gitDir, "GIT_WORK_TREE="+r.root, "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git: git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

// PurgeUnreachable expires every reflog entry now and deletes every
// object no ref, index or HEAD reaches, loose or packed, by running
// `git reflog expire --expire=now --expire-unreachable=now --all` and
// `git gc --prune=now`. This is the one place gitstore runs the git CLI:
// git's own notion of reachability (the index of every worktree, reflogs,
// HEADs, .keep and promisor packs) is what must decide which objects may
// be deleted, and repacking without the ones nobody reaches is gc's job;
// a reimplementation that missed one root would delete a person's staged
// work. The caller holds Lock.
func (r *Repo) PurgeUnreachable(ctx context.Context) error {
	if _, err := r.git(ctx, "reflog", "expire", "--expire=now", "--expire-unreachable=now", "--all"); err != nil {
		return err
	}
	_, err := r.git(ctx, "-c", "gc.cruftPacks=false", "-c", "gc.auto=0", "gc", "--prune=now", "--quiet")
	return err
}

// ObjectsHolding returns the ids of the objects in the repository, loose
// or packed (deltas resolved), whose content holds one of needles, and
// how many objects were read. Alternates are not searched: they are
// another repository's.
func (r *Repo) ObjectsHolding(ctx context.Context, needles [][]byte) (hits []string, n int, err error) {
	o := r.newObjStore()
	defer o.close()
	it, err := o.st.IterEncodedObjects(plumbing.AnyObject)
	if err != nil {
		return nil, 0, err
	}
	defer it.Close()
	err = it.ForEach(func(obj plumbing.EncodedObject) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		n++
		rd, err := obj.Reader()
		if err != nil {
			return err
		}
		b, err := io.ReadAll(rd)
		rd.Close()
		if err != nil {
			return err
		}
		for _, nd := range needles {
			if len(nd) > 0 && bytes.Contains(b, nd) {
				hits = append(hits, obj.Hash().String())
				break
			}
		}
		return nil
	})
	if errors.Is(err, storer.ErrStop) {
		err = nil
	}
	return hits, n, err
}

// HistoryBlobs calls fn once for every distinct (path, blob) that a
// commit reachable from any ref or HEAD holds, for the paths match
// accepts.
func (r *Repo) HistoryBlobs(ctx context.Context, match func(path string) bool, fn func(path string, data []byte) error) error {
	refs, err := r.listRefs()
	if err != nil {
		return err
	}
	if _, h, ok, err := r.head(); err == nil && ok {
		refs = append(refs, refInfo{"HEAD", h})
	}
	o := r.newObjStore()
	defer o.close()
	seenTree := map[string]bool{}
	seenBlob := map[string]bool{}
	enter := func(h plumbing.Hash, dir string) (bool, error) {
		if seenTree[dir+"\x00"+h.String()] {
			return false, nil
		}
		seenTree[dir+"\x00"+h.String()] = true
		return true, nil
	}
	file := func(p string, e treeEntry) error {
		if e.mode == modeGitlnk || !match(p) || seenBlob[p+"\x00"+e.hash.String()] {
			return nil
		}
		seenBlob[p+"\x00"+e.hash.String()] = true
		_, data, err := o.read(e.hash)
		if err != nil {
			return err
		}
		return fn(p, data)
	}
	for _, ri := range refs {
		h := o.peel(ri.hash)
		if typ, _, err := o.read(h); err != nil || typ != plumbing.CommitObject {
			continue
		}
		var werr error
		if err := o.reachable(h, func(c plumbing.Hash) bool {
			if werr = ctx.Err(); werr != nil {
				return false
			}
			t, err := o.commitTree(c)
			if err == nil {
				err = o.walkTree(t, "", enter, file)
			}
			werr = err
			return werr == nil
		}); err != nil {
			return err
		}
		if werr != nil {
			return werr
		}
	}
	return nil
}

// FilesHolding returns the files of the git directory outside objects/
// (messages, logs, state files) whose bytes hold one of needles, after
// removing the message files git keeps from the last commit, merge or
// squash (COMMIT_EDITMSG, MERGE_MSG, SQUASH_MSG), which hold nothing else.
func (r *Repo) FilesHolding(needles [][]byte) ([]string, error) {
	var hits []string
	err := filepath.WalkDir(r.gitDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == filepath.Join(r.gitDir, "objects") {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if fi, err := d.Info(); err != nil || fi.Size() > 64<<20 {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, n := range needles {
			if len(n) == 0 || !bytes.Contains(b, n) {
				continue
			}
			switch d.Name() {
			case "COMMIT_EDITMSG", "MERGE_MSG", "SQUASH_MSG":
				if err := os.Remove(p); err != nil {
					return err
				}
			default:
				rel, _ := filepath.Rel(r.gitDir, p)
				hits = append(hits, filepath.ToSlash(rel))
			}
			break
		}
		return nil
	})
	return hits, err
}
