package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// ReadHead returns a memory-relative file's content at HEAD; ok is false if
// the file is absent, or the branch is unborn.
func (r *Repo) ReadHead(ctx context.Context, p string) (data []byte, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	tp, err := r.validatePath(p)
	if err != nil {
		return nil, false, err
	}
	o := r.newObjStore()
	defer o.close()
	tree, born, err := r.headTree(o)
	if err != nil || !born {
		return nil, false, err
	}
	e, found, err := o.lookup(tree, tp)
	if err != nil || !found || e.isTree() || e.mode == modeGitlnk {
		return nil, false, err
	}
	_, b, err := o.read(e.hash)
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

// headTree returns HEAD's tree (born=false on an unborn branch). A detached
// HEAD is accepted for reading.
func (r *Repo) headTree(o *objStore) (plumbing.Hash, bool, error) {
	h, ok, err := r.headCommit()
	if err != nil || !ok {
		return plumbing.ZeroHash, false, err
	}
	t, err := o.commitTree(h)
	return t, err == nil, err
}

// HeadHash returns the commit HEAD points to, or "" on an unborn branch.
func (r *Repo) HeadHash(ctx context.Context) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	h, ok, err := r.headCommit()
	if err != nil {
		return "", err
	}
	return headString(h, ok), nil
}

func headString(h plumbing.Hash, born bool) string {
	if !born {
		return ""
	}
	return h.String()
}

func (r *Repo) headCommit() (plumbing.Hash, bool, error) {
	ref, err := r.headRef()
	if errors.Is(err, ErrDetachedHead) {
		b, rerr := os.ReadFile(filepath.Join(r.gitDir, "HEAD"))
		if rerr != nil {
			return plumbing.ZeroHash, false, rerr
		}
		return plumbing.NewHash(strings.TrimSpace(string(b))), true, nil
	}
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	return r.readRef(ref)
}

// Changed returns the memory-relative paths whose worktree content differs
// from HEAD (new, modified or deleted), among paths plus every regular file
// under each of dirs, in the worktree or in HEAD. The result is sorted.
// Index stat data is used to avoid re-hashing files git knows are unchanged.
func (r *Repo) Changed(ctx context.Context, paths []string, dirs []string) ([]string, error) {
	o := r.newObjStore()
	defer o.close()
	tree, _, err := r.headTree(o)
	if err != nil {
		return nil, err
	}
	cand := map[string]bool{}
	for _, p := range paths {
		tp, err := r.validatePath(p)
		if err != nil {
			return nil, err
		}
		cand[tp] = true
	}
	for _, d := range dirs {
		tp, err := r.validatePath(d)
		if err != nil {
			return nil, err
		}
		// worktree side
		fi, missing, err := r.lstatDirInRepo(tp)
		if err != nil {
			return nil, err
		}
		if !missing && fi.IsDir() {
			base := filepath.Join(r.root, filepath.FromSlash(tp))
			err := filepath.WalkDir(base, func(p string, de fs.DirEntry, err error) error {
				if err != nil {
					return err
				}
				if de.IsDir() && de.Name() == ".git" {
					return filepath.SkipDir
				}
				if de.Type().IsRegular() {
					rel, _ := filepath.Rel(r.root, p)
					cand[filepath.ToSlash(rel)] = true
				}
				return ctx.Err()
			})
			if err != nil {
				return nil, err
			}
		}
		// HEAD side
		if e, ok, err := o.lookup(tree, tp); err != nil {
			return nil, err
		} else if ok && e.isTree() {
			if err := o.walkBlobs(e.hash, tp, func(p string) { cand[p] = true }); err != nil {
				return nil, err
			}
		}
	}
	ix, _ := r.readIndex() // only an optimisation
	var ixTime time.Time
	if st, err := os.Stat(r.indexPath()); err == nil {
		ixTime = st.ModTime()
	}
	ar := newAttrResolver(r)
	var out []string
	for tp := range cand {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		he, hok, err := o.lookup(tree, tp)
		if err != nil {
			return nil, err
		}
		if hok && he.isTree() {
			hok = false
		}
		fi, missing, err := r.lstatInRepo(tp)
		if err != nil {
			return nil, err
		}
		changed := false
		switch {
		case missing:
			changed = hok
		case !hok:
			changed = true
		case ix != nil && statClean(ix.find(tp), fi, ixTime, he):
			changed = false
		default:
			wf, err := r.readWorktree(o, ar, tree, tp, nil)
			if err != nil {
				return nil, err
			}
			changed = wf.hash != he.hash || wf.mode != he.mode
		}
		if changed {
			rel := tp
			if r.prefix != "" {
				rel = strings.TrimPrefix(tp, r.prefix+"/")
			}
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out, nil
}

// lstatDirInRepo is lstatInRepo for a directory.
func (r *Repo) lstatDirInRepo(tp string) (os.FileInfo, bool, error) {
	parts := strings.Split(tp, "/")
	cur := r.root
	var fi os.FileInfo
	for i, c := range parts {
		cur = filepath.Join(cur, c)
		var err error
		fi, err = os.Lstat(cur)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) || isNotDir(err) {
				return nil, true, nil
			}
			return nil, false, err
		}
		if fi.Mode()&os.ModeSymlink != 0 {
			return nil, false, fmt.Errorf("git: %s: %s is a symbolic link; memory paths must not lead through symlinks",
				tp, strings.Join(parts[:i+1], "/"))
		}
		if !fi.IsDir() {
			return fi, false, nil
		}
	}
	return fi, false, nil
}

// statClean reports whether an index entry vouches that the worktree file
// still has the content of the HEAD entry (git's racy-git rule included).
func statClean(e *idxEntry, fi os.FileInfo, ixTime time.Time, he treeEntry) bool {
	if e == nil || e.stage() != 0 || plumbing.Hash(e.hash) != he.hash {
		return false
	}
	want := modeBlob
	if e.mode == 0o100755 {
		want = modeExec
	}
	if want != he.mode {
		return false
	}
	var cur idxEntry
	fillStat(&cur, fi)
	if cur.mtimeS != e.mtimeS || cur.mtimeN != e.mtimeN || cur.size != e.size || cur.ino != e.ino || cur.ctimeS != e.ctimeS {
		return false
	}
	// racily clean: file not older than the index -> must re-hash
	return fi.ModTime().Before(ixTime)
}

func (o *objStore) walkBlobs(h plumbing.Hash, dir string, fn func(string)) error {
	ents, err := o.readTree(h)
	if err != nil {
		return err
	}
	for _, e := range ents {
		p := dir + "/" + e.name
		if e.isTree() {
			if err := o.walkBlobs(e.hash, p, fn); err != nil {
				return err
			}
		} else if e.mode != modeGitlnk {
			fn(p)
		}
	}
	return nil
}

// PersonSignature returns the person's identity from GIT_AUTHOR_NAME /
// GIT_AUTHOR_EMAIL, then author.* / user.* in the repository, global and XDG
// git configuration; ok is false if no name and email are configured.
func (r *Repo) PersonSignature() (Signature, bool) {
	s := Signature{Name: os.Getenv("GIT_AUTHOR_NAME"), Email: os.Getenv("GIT_AUTHOR_EMAIL")}
	if s.Name == "" {
		s.Name = r.cfg.get("author", "", "name")
	}
	if s.Name == "" {
		s.Name = r.cfg.get("user", "", "name")
	}
	if s.Email == "" {
		s.Email = r.cfg.get("author", "", "email")
	}
	if s.Email == "" {
		s.Email = r.cfg.get("user", "", "email")
	}
	if s.Email == "" {
		s.Email = os.Getenv("EMAIL")
	}
	if strings.TrimSpace(s.Name) == "" || strings.TrimSpace(s.Email) == "" || checkSignature(s) != nil {
		return Signature{}, false
	}
	return s, true
}

// Commit is one commit as returned by Log.
type Commit struct {
	Hash     string
	Parent   string // first parent, "" for a root commit
	Author   Signature
	When     time.Time
	Subject  string
	Body     string // message after the subject paragraph, trailers included
	Trailers map[string][]string
}

// Log walks first-parent history from HEAD, newest first, and returns the
// commits for which match returns true (all if match is nil), at most limit
// of them (0 = no limit).
func (r *Repo) Log(ctx context.Context, match func(*Commit) bool, limit int) ([]*Commit, error) {
	o := r.newObjStore()
	defer o.close()
	h, ok, err := r.headCommit()
	if err != nil || !ok {
		return nil, err
	}
	var out []*Commit
	for !h.IsZero() {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		obj, err := o.st.EncodedObject(plumbing.CommitObject, h)
		if err != nil {
			return out, fmt.Errorf("git: log: %w", err)
		}
		c, err := object.DecodeCommit(o.st, obj)
		if err != nil {
			return out, fmt.Errorf("git: log: %w", err)
		}
		subject, body, _ := strings.Cut(strings.TrimLeft(c.Message, "\n"), "\n")
		lc := &Commit{
			Hash:     h.String(),
			Author:   Signature{Name: c.Author.Name, Email: c.Author.Email},
			When:     c.Author.When,
			Subject:  strings.TrimSpace(subject),
			Body:     strings.Trim(body, "\n"),
			Trailers: ParseTrailers(c.Message),
		}
		if len(c.ParentHashes) > 0 {
			lc.Parent = c.ParentHashes[0].String()
		}
		if match == nil || match(lc) {
			out = append(out, lc)
			if limit > 0 && len(out) >= limit {
				break
			}
		}
		if len(c.ParentHashes) == 0 {
			break
		}
		h = c.ParentHashes[0]
	}
	return out, nil
}

// ParseTrailers parses git-style trailers: "Key: value" lines forming the
// last paragraph of a message (never the subject paragraph). Continuation
// lines starting with whitespace extend the previous value. It returns nil
// when there is no trailer block.
func ParseTrailers(msg string) map[string][]string {
	msg = strings.ReplaceAll(msg, "\r\n", "\n")
	lines := strings.Split(strings.TrimRight(msg, "\n \t"), "\n")
	end := len(lines)
	start := end
	for start > 0 && strings.TrimSpace(lines[start-1]) != "" {
		start--
	}
	if start == 0 || end == start {
		return nil // only one paragraph: it is the subject
	}
	type kv struct{ k, v string }
	var kvs []kv
	for _, l := range lines[start:end] {
		if (l[0] == ' ' || l[0] == '\t') && len(kvs) > 0 {
			kvs[len(kvs)-1].v += " " + strings.TrimSpace(l)
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		if !ok || !validTrailerKey(k) {
			return nil
		}
		kvs = append(kvs, kv{k, strings.TrimSpace(v)})
	}
	out := map[string][]string{}
	for _, x := range kvs {
		out[x.k] = append(out[x.k], x.v)
	}
	return out
}

func validTrailerKey(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range k {
		if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return true
}
