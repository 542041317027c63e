package gitstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestPushToABranchAnotherPushHoldsIsRejectedNotUnreachable: while another
// push holds the remote branch's lock (a sync killed on another machine
// leaves its git push running for a moment), the push is refused as "the
// remote moved" (sync fetches and pushes again), not as an unreachable
// remote; once the lock is gone the same push lands.
func TestPushToABranchAnotherPushHoldsIsRejectedNotUnreachable(t *testing.T) {
	ctx := context.Background()
	r, root := newRepo(t)
	remote := filepath.Join(t.TempDir(), "remote.git")
	git(t, "", "init", "-q", "--bare", "-b", "main", remote)
	git(t, root, "remote", "add", "origin", remote)
	first := commitMain(t, r, root, "# Memory\n")
	if err := r.Push(ctx, "origin", first, "main"); err != nil {
		t.Fatalf("first push: %v", err)
	}
	second := commitMain(t, r, root, "# Memory\n\n- a line\n")
	lock := filepath.Join(remote, "refs", "heads", "main.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	err := r.Push(ctx, "origin", second, "main")
	if !errors.Is(err, ErrPushRejected) || errors.Is(err, ErrRemote) {
		t.Fatalf("push while the remote branch is locked: %v; want ErrPushRejected, not ErrRemote", err)
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if err := r.Push(ctx, "origin", second, "main"); err != nil {
		t.Fatalf("push once the lock is gone: %v", err)
	}
	if got := git(t, remote, "rev-parse", "main"); got != second {
		t.Fatalf("remote main = %s, want %s", got, second)
	}
}

// TestPushToAMissingRemoteIsUnreachable: a remote that is not there is
// ErrRemote, not a rejection to retry.
func TestPushToAMissingRemoteIsUnreachable(t *testing.T) {
	ctx := context.Background()
	r, root := newRepo(t)
	git(t, root, "remote", "add", "origin", filepath.Join(t.TempDir(), "nowhere.git"))
	c := commitMain(t, r, root, "# Memory\n")
	if err := r.Push(ctx, "origin", c, "main"); !errors.Is(err, ErrRemote) || errors.Is(err, ErrPushRejected) {
		t.Fatalf("push to a missing remote: %v; want ErrRemote", err)
	}
}

// commitMain writes MEMORY.md and commits it.
func commitMain(t *testing.T, r *Repo, root, content string) string {
	t.Helper()
	writeFile(t, root, "MEMORY.md", content)
	return mustCommit(t, r, "MEMORY.md")
}
