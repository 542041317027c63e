package mdmem

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Resolve finishes a person's own `git pull` or `git merge` that stopped
// on conflicts in the memory: it merges the two commits with the same
// entry-level rules as sync (MergeReplicas on HEAD, MERGE_HEAD and their
// merge base, never on the marker-laden files), and commits the result as
// the merge commit through the write transaction. A file that is not a
// memory file and that both sides changed is taken as the person resolved
// it in the working tree, or the merge is refused naming it. The files
// as they were (markers and all) are saved under RescueDir first.

// ResolveResult says what Resolve did.
type ResolveResult struct {
	Commit  string       `json:"commit"`
	Merged  string       `json:"merged"` // the commit merged in (MERGE_HEAD)
	Saved   []string     `json:"saved"`  // the working files saved before (memory-relative paths under RescueDir)
	Merge   *MergeResult `json:"merge"`
	Machine string       `json:"-"`
}

// ErrNoMerge is returned when there is no unfinished git merge to resolve.
var ErrNoMerge = errors.New("no git merge is in progress in the memory")

// Resolve finishes an unfinished git merge (see above).
func (s *Store) Resolve(ctx context.Context, machine string) (*ResolveResult, error) {
	allow := s.AllowConflicts
	s.AllowConflicts = true // this is the command that finishes the merge
	unlock, err := s.Lock(ctx)
	s.AllowConflicts = allow
	if err != nil {
		return nil, err
	}
	defer func() { _ = unlock() }()
	return s.resolveLocked(ctx, machine)
}

func (s *Store) resolveLocked(ctx context.Context, machine string) (*ResolveResult, error) {
	heads, err := s.Repo.MergeHeads()
	if err != nil {
		return nil, err
	}
	switch {
	case len(heads) == 0:
		return nil, ErrNoMerge
	case len(heads) > 1:
		return nil, &SyncRefusedError{Reason: fmt.Sprintf("the merge in progress merges %d commits at once", len(heads)), Fix: "abort it (git merge --abort) and merge one branch at a time"}
	}
	if p := s.Repo.Prefix(); p != "" {
		return nil, &SyncRefusedError{Reason: "the memory is the folder " + p + " inside a larger repository", Fix: "finish the merge with git (memctl resolves merges of a memory that is its own repository)"}
	}
	head, err := s.Repo.HeadHash(ctx)
	if err != nil {
		return nil, err
	}
	theirs := heads[0]
	base, err := s.Repo.MergeBase(ctx, head, theirs)
	if err != nil {
		return nil, err
	}
	bf, hf, tf, err := s.mergeSides(ctx, base, head, theirs)
	if err != nil {
		return nil, err
	}
	in := MergeInput{Base: bf, Forgotten: s.repeatsForgotten, Sides: [2]MergeSide{{Files: hf, Machine: s.machineOf(ctx, head)}, {Files: tf, Machine: s.machineOf(ctx, theirs)}}}
	mr, err := MergeReplicas(in)
	var other *OtherFileConflictError
	if errors.As(err, &other) {
		// The person resolves files that are not memory: take theirs from
		// the working tree, once free of markers.
		var open []string
		for _, p := range other.Paths {
			b, rerr := os.ReadFile(filepath.Join(s.Dir, filepath.FromSlash(p)))
			if rerr != nil || bytes.Contains(b, []byte("<<<<<<<")) || bytes.Contains(b, []byte(">>>>>>>")) {
				open = append(open, p)
				continue
			}
			in.Sides[0].Files = copyFiles(in.Sides[0].Files)
			in.Sides[1].Files = copyFiles(in.Sides[1].Files)
			in.Sides[0].Files[p], in.Sides[1].Files[p] = b, b
		}
		if len(open) > 0 {
			return nil, &SyncRefusedError{Reason: "the merge also conflicts in " + strings.Join(open, ", ") + ", which are not memory files",
				Fix: "resolve those files yourself (edit them, remove the markers), then run memctl resolve again"}
		}
		mr, err = MergeReplicas(in)
	}
	if err != nil {
		return nil, err
	}
	res := &ResolveResult{Merged: theirs, Merge: mr}
	// Save what the working tree holds now, then end git's merge state.
	stamp := time.Now().UTC().Format("20060102T150405Z")
	for _, p := range sortedKeys(mr.Files) {
		b, err := os.ReadFile(filepath.Join(s.Dir, filepath.FromSlash(p)))
		if errors.Is(err, fs.ErrNotExist) || err == nil && bytes.Equal(b, hf[p]) {
			continue
		}
		if err != nil {
			return nil, err
		}
		rel := RescueDir + "/resolve-" + stamp + "/" + p
		if err := EnsureDir(s.Dir, filepath.ToSlash(filepath.Dir(rel))); err != nil {
			return nil, err
		}
		if err := WriteFileAtomic(ctx, filepath.Join(s.Dir, filepath.FromSlash(rel)), b, PrivateFileMode); err != nil {
			return nil, err
		}
		res.Saved = append(res.Saved, rel)
	}
	if err := s.Repo.AbortMerge(ctx); err != nil {
		return nil, err
	}
	res.Commit, err = s.commitMerge(ctx, hf, mr, base, theirs, machine, CommitMessage{
		Subject: fmt.Sprintf("resolve: merge %.12s entry by entry", theirs), Op: "resolve"})
	if err != nil {
		return nil, err
	}
	return res, nil
}
