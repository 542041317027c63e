package gitstore

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// HeadFiles returns the memory-relative paths of the files HEAD holds
// directly in the memory-relative directory dir (not in its
// subdirectories), sorted. An unborn branch or a missing dir gives none.
func (r *Repo) HeadFiles(ctx context.Context, dir string) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	tp, err := r.validatePath(dir)
	if err != nil {
		return nil, err
	}
	o := r.newObjStore()
	defer o.close()
	tree, born, err := r.headTree(o)
	if err != nil || !born {
		return nil, err
	}
	e, ok, err := o.lookup(tree, tp)
	if err != nil || !ok || !e.isTree() {
		return nil, err
	}
	ents, err := o.readTree(e.hash)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, te := range ents {
		if !te.isTree() && te.mode != modeGitlnk {
			out = append(out, dir+"/"+te.name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// ReadParent returns a memory-relative file's content in the first parent
// of commit (a full hash); ok is false if the file is absent there or the
// commit has no parent.
func (r *Repo) ReadParent(ctx context.Context, commit, p string) (data []byte, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	tp, err := r.validatePath(p)
	if err != nil {
		return nil, false, err
	}
	if !plumbing.IsHash(commit) {
		return nil, false, fmt.Errorf("git: %q is not a commit hash", commit)
	}
	o := r.newObjStore()
	defer o.close()
	typ, b, err := o.read(plumbing.NewHash(commit))
	if err != nil {
		return nil, false, err
	}
	if typ != plumbing.CommitObject {
		return nil, false, fmt.Errorf("git: %s is a %s, not a commit", commit, typ)
	}
	header, _, _ := bytes.Cut(b, []byte("\n\n"))
	var parent string
	for _, line := range strings.Split(string(header), "\n") {
		if h, found := strings.CutPrefix(line, "parent "); found {
			parent = h
			break
		}
	}
	if !plumbing.IsHash(parent) {
		return nil, false, nil
	}
	tree, err := o.commitTree(plumbing.NewHash(parent))
	if err != nil {
		return nil, false, err
	}
	e, found, err := o.lookup(tree, tp)
	if err != nil || !found || e.isTree() || e.mode == modeGitlnk {
		return nil, false, err
	}
	_, data, err = o.read(e.hash)
	if err != nil {
		return nil, false, err
	}
	return data, true, nil
}
