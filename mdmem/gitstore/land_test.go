package gitstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLandRecordsEveryChangedPathInTheIndex: one commit that adds a file
// sorting before an existing one and changes that one leaves both in the
// index with the committed blobs (a lookup by binary search on an index
// not kept sorted missed the second: git status showed it modified).
func TestLandRecordsEveryChangedPathInTheIndex(t *testing.T) {
	r, root := newRepo(t)
	writeFile(t, root, "b.md", "one\n")
	mustCommit(t, r, "b.md")
	ctx := context.Background()
	head, err := r.HeadHash(ctx)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"a.md": []byte("new\n"), "b.md": []byte("two\n"), "c.md": []byte("three\n")}
	for p, b := range files {
		writeFile(t, root, p, string(b))
	}
	p, err := r.Prepare(ctx, PrepareRequest{Base: head, Files: files, Message: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Land(ctx, p, LandSteps{}); err != nil {
		t.Fatal(err)
	}
	if st := git(t, root, "status", "--porcelain"); st != "" {
		t.Fatalf("status %q", st)
	}
}

// TestLandChangesNothingBeforeTheRefMoves: a commit whose branch moved
// since Prepare, or whose index.lock a git process holds, leaves the ref,
// the index and the files as they were, and Journal is not run for the
// lock.
func TestLandChangesNothingBeforeTheRefMoves(t *testing.T) {
	r, root := newRepo(t)
	writeFile(t, root, "a.md", "one\n")
	mustCommit(t, r, "a.md")
	ctx := context.Background()
	head, _ := r.HeadHash(ctx)
	p, err := r.Prepare(ctx, PrepareRequest{Base: head, Files: map[string][]byte{"a.md": []byte("two\n")}, Message: "m"})
	if err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(root, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	journaled, checkedOut := false, false
	steps := LandSteps{Journal: func() error { journaled = true; return nil }, Checkout: func() error { checkedOut = true; return nil }}
	if err := r.Land(ctx, p, steps); !errors.Is(err, ErrGitLocked) {
		t.Fatalf("Land with index.lock held = %v", err)
	}
	os.Remove(lock)
	if journaled || checkedOut {
		t.Errorf("journal %v, checkout %v with index.lock held", journaled, checkedOut)
	}
	writeFile(t, root, "b.md", "other\n")
	mustCommit(t, r, "b.md")
	moved, _ := r.HeadHash(ctx)
	if err := r.Land(ctx, p, steps); !errors.Is(err, ErrConcurrentUpdate) {
		t.Fatalf("Land after the branch moved = %v", err)
	}
	if h, _ := r.HeadHash(ctx); h != moved {
		t.Errorf("HEAD %s, want %s", h, moved)
	}
	if checkedOut {
		t.Error("checkout ran although the ref did not move")
	}
	if got := git(t, root, "show", ":a.md"); strings.TrimSpace(got) != "one" {
		t.Errorf("index a.md = %q", got)
	}
}
