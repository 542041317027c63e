package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestCommitBasic(t *testing.T) {
	ctx := context.Background()
	r, root := newRepo(t)
	if got := git(t, root, "symbolic-ref", "HEAD"); got != "refs/heads/main" {
		t.Fatalf("HEAD = %q", got)
	}
	writeFile(t, root, "MEMORY.md", "# Memory\n")
	writeFile(t, root, "topics/db.md", "postgres\n")
	h1 := mustCommit(t, r, "MEMORY.md", "topics/db.md")
	if h1 == "" || git(t, root, "rev-parse", "HEAD") != h1 {
		t.Fatalf("commit %q not at HEAD", h1)
	}
	if h := mustCommit(t, r, "MEMORY.md", "topics/db.md"); h != "" {
		t.Fatalf("no-op commit returned %q", h)
	}
	if s := git(t, root, "status", "--porcelain"); s != "" {
		t.Fatalf("status not clean:\n%s", s)
	}
	if a := git(t, root, "log", "-1", "--format=%an <%ae>|%cn|%s|%(trailers:key=Memctl-Op,valueonly)"); a != "memctl <memctl@localhost>|memctl|memctl: update|test" {
		t.Fatalf("log: %q", a)
	}
	if got := git(t, root, "ls-tree", "-r", "--name-only", "HEAD"); got != "MEMORY.md\ntopics/db.md" {
		t.Fatalf("tree: %q", got)
	}
	fsckClean(t, root)
	if !strings.Contains(git(t, root, "reflog", "-1"), "commit (initial): memctl: update") {
		t.Fatal("reflog missing")
	}

	// modify one, add one in a new nested dir, delete one
	writeFile(t, root, "MEMORY.md", "# Memory\nmore\n")
	writeFile(t, root, "topics/deep/x.md", "x\n")
	os.Remove(filepath.Join(root, "topics", "db.md"))
	ch, err := r.Changed(ctx, []string{"MEMORY.md"}, []string{"topics"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"MEMORY.md", "topics/db.md", "topics/deep/x.md"}; !reflect.DeepEqual(ch, want) {
		t.Fatalf("Changed = %v, want %v", ch, want)
	}
	h2 := mustCommit(t, r, "MEMORY.md", "topics/db.md", "topics/deep/x.md")
	if h2 == "" || git(t, root, "rev-parse", "HEAD~1") != h1 {
		t.Fatal("second commit not on top of first")
	}
	if got := git(t, root, "ls-tree", "-r", "--name-only", "HEAD"); got != "MEMORY.md\ntopics/deep/x.md" {
		t.Fatalf("tree: %q", got)
	}
	if s := git(t, root, "status", "--porcelain"); s != "" {
		t.Fatalf("status not clean:\n%s", s)
	}
	ch, err = r.Changed(ctx, []string{"MEMORY.md"}, []string{"topics"})
	if err != nil || len(ch) != 0 {
		t.Fatalf("Changed after commit = %v, %v", ch, err)
	}
	data, ok, err := r.ReadHead(ctx, "MEMORY.md")
	if err != nil || !ok || string(data) != "# Memory\nmore\n" {
		t.Fatalf("ReadHead = %q %v %v", data, ok, err)
	}
	if _, ok, _ := r.ReadHead(ctx, "topics/db.md"); ok {
		t.Fatal("deleted file still readable at HEAD")
	}
	// deleting the last file of a directory removes the tree
	os.Remove(filepath.Join(root, "topics", "deep", "x.md"))
	mustCommit(t, r, "topics/deep/x.md")
	if got := git(t, root, "ls-tree", "-r", "-t", "--name-only", "HEAD"); got != "MEMORY.md" {
		t.Fatalf("tree: %q", got)
	}
	fsckClean(t, root)
	// git's diff-index agrees the index matches HEAD and the worktree
	git(t, root, "diff", "--quiet", "HEAD")
	git(t, root, "diff", "--cached", "--quiet")
}

func TestCommitSubdirPrefix(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	git(t, root, "init", "-q", "-b", "trunk")
	writeFile(t, root, "README", "hi\n")
	git(t, root, "add", "README")
	git(t, root, "commit", "-q", "-m", "init")
	mem := filepath.Join(root, "docs", "memory")
	os.MkdirAll(mem, 0o755)
	r, err := Open(ctx, mem)
	if err != nil {
		t.Fatal(err)
	}
	if r.Prefix() != "docs/memory" {
		t.Fatalf("prefix %q", r.Prefix())
	}
	writeFile(t, mem, "topics/a.md", "a\n")
	mustCommit(t, r, "topics/a.md")
	if got := git(t, root, "ls-tree", "-r", "--name-only", "HEAD"); got != "README\ndocs/memory/topics/a.md" {
		t.Fatalf("tree %q", got)
	}
	if s := git(t, root, "status", "--porcelain"); s != "" {
		t.Fatalf("status:\n%s", s)
	}
	if git(t, root, "rev-parse", "--abbrev-ref", "HEAD") != "trunk" {
		t.Fatal("branch")
	}
	writeFile(t, mem, "topics/b.md", "b\n")
	ch, err := r.Changed(ctx, nil, []string{"topics"})
	if err != nil || !reflect.DeepEqual(ch, []string{"topics/b.md"}) {
		t.Fatalf("Changed %v %v", ch, err)
	}
	fsckClean(t, root)
}

func TestStagedHumanWorkSurvives(t *testing.T) {
	root := t.TempDir()
	git(t, root, "init", "-q", "-b", "main")
	writeFile(t, root, "notes.txt", "v1\n")
	git(t, root, "add", "notes.txt")
	git(t, root, "commit", "-q", "-m", "human")
	r, err := Open(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "human.md", "mine\n")
	writeFile(t, root, "notes.txt", "v2 staged\n")
	git(t, root, "add", "human.md", "notes.txt")
	writeFile(t, root, "notes.txt", "v3 unstaged\n")
	writeFile(t, root, "MEMORY.md", "mem\n")
	mustCommit(t, r, "MEMORY.md")
	if got := git(t, root, "show", "--name-only", "--format=", "HEAD"); got != "MEMORY.md" {
		t.Fatalf("memctl commit contains %q", got)
	}
	if got := git(t, root, "status", "--porcelain"); got != "A  human.md\nMM notes.txt" {
		t.Fatalf("status:\n%s", got)
	}
	if got := git(t, root, "show", ":notes.txt"); got != "v2 staged" {
		t.Fatalf("staged notes.txt = %q", got)
	}
	// the person's next commit works and contains only their files
	git(t, root, "commit", "-q", "-m", "person")
	if got := git(t, root, "show", "--name-only", "--format=", "HEAD"); got != "human.md\nnotes.txt" {
		t.Fatalf("person's commit contains %q", got)
	}
	fsckClean(t, root)
}

func TestIndexVersions(t *testing.T) {
	for _, v := range []string{"2", "3", "4"} {
		t.Run("v"+v, func(t *testing.T) {
			root := t.TempDir()
			git(t, root, "init", "-q", "-b", "main")
			for i := 0; i < 30; i++ {
				writeFile(t, root, "dir/sub/file"+strings.Repeat("x", i)+".txt", "c\n")
			}
			git(t, root, "add", ".")
			git(t, root, "commit", "-q", "-m", "init")
			git(t, root, "update-index", "--index-version", v)
			writeFile(t, root, "staged.txt", "s\n")
			git(t, root, "add", "staged.txt")
			git(t, root, "update-index", "--assume-unchanged", "dir/sub/file.txt")
			if v != "2" {
				writeFile(t, root, "ita.txt", "i\n")
				git(t, root, "add", "-N", "ita.txt")
			}
			r, err := Open(context.Background(), root)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, root, "dir/MEMORY.md", "m\n")
			mustCommit(t, r, "dir/MEMORY.md")
			want := "A  staged.txt"
			if v != "2" {
				want = "A ita.txt\nA  staged.txt" // first line's leading space trimmed
			}
			if got := git(t, root, "status", "--porcelain"); got != want {
				t.Fatalf("status:\n%s\nwant\n%s", got, want)
			}
			if got := git(t, root, "ls-files", "-v", "dir/sub/file.txt"); !strings.HasPrefix(got, "h ") {
				t.Fatalf("assume-unchanged bit lost: %q", got)
			}
			b, _ := os.ReadFile(filepath.Join(root, ".git", "index"))
			if got := fmt.Sprint(b[7]); got != v {
				t.Fatalf("index version %s, want %s", got, v)
			}
			fsckClean(t, root)
		})
	}
}

func TestGitLockFilesRespected(t *testing.T) {
	old := gitLockTimeout
	gitLockTimeout = 150 * time.Millisecond
	defer func() { gitLockTimeout = old }()
	for _, lock := range []string{"index.lock", "refs/heads/main.lock"} {
		t.Run(lock, func(t *testing.T) {
			r, root := newRepo(t)
			writeFile(t, root, "MEMORY.md", "1\n")
			h1 := mustCommit(t, r, "MEMORY.md")
			idxBefore, _ := os.ReadFile(filepath.Join(root, ".git", "index"))
			lp := filepath.Join(root, ".git", filepath.FromSlash(lock))
			if err := os.WriteFile(lp, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			writeFile(t, root, "MEMORY.md", "2\n")
			_, err := r.Commit(context.Background(), CommitRequest{Paths: []string{"MEMORY.md"}, Message: "x"})
			if err == nil || !errors.Is(err, ErrGitLocked) || !strings.Contains(err.Error(), lp) ||
				!strings.Contains(err.Error(), "another git process") {
				t.Fatalf("err = %v", err)
			}
			if git(t, root, "rev-parse", "HEAD") != h1 {
				t.Fatal("HEAD moved")
			}
			if idx, _ := os.ReadFile(filepath.Join(root, ".git", "index")); string(idx) != string(idxBefore) {
				t.Fatal("index changed")
			}
			if _, err := os.Stat(lp); err != nil {
				t.Fatal("git's lock file was removed")
			}
			// a new Open + Commit (stale-lock cleanup runs) must not remove it either
			r2, err := Open(context.Background(), root)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r2.Commit(context.Background(), CommitRequest{Paths: []string{"MEMORY.md"}, Message: "x"}); err == nil {
				t.Fatal("commit succeeded despite lock")
			}
			if _, err := os.Stat(lp); err != nil {
				t.Fatal("git's lock file was removed")
			}
			os.Remove(lp)
			if h := mustCommit(t, r, "MEMORY.md"); h == "" {
				t.Fatal("no commit after lock removal")
			}
			if s := git(t, root, "status", "--porcelain"); s != "" {
				t.Fatalf("status:\n%s", s)
			}
			fsckClean(t, root)
		})
	}
}

func TestStaleMemctlLocksAreRemoved(t *testing.T) {
	r, root := newRepo(t)
	writeFile(t, root, "MEMORY.md", "1\n")
	mustCommit(t, r, "MEMORY.md")
	// Simulate a memctl process killed while holding both locks.
	il, err := acquireLock(r.gitDir, r.indexPath(), "index")
	if err != nil {
		t.Fatal(err)
	}
	rl, err := acquireLock(r.gitDir, filepath.Join(r.gitDir, "refs", "heads", "main"), refMarker("refs/heads/main"))
	if err != nil {
		t.Fatal(err)
	}
	if err := il.write([]byte("partial")); err != nil {
		t.Fatal(err)
	}
	_, _ = il, rl // "crash": never released
	if _, err := gitErr(root, "add", "MEMORY.md"); err == nil {
		t.Fatal("git add should see index.lock")
	}
	r2, err := Open(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if len(r2.Repaired()) != 2 {
		t.Fatalf("Repaired = %q", r2.Repaired())
	}
	for _, p := range []string{"index.lock", "refs/heads/main.lock"} {
		if _, err := os.Stat(filepath.Join(root, ".git", p)); err == nil {
			t.Fatalf("%s not cleaned up", p)
		}
	}
	writeFile(t, root, "MEMORY.md", "2\n")
	if h := mustCommit(t, r2, "MEMORY.md"); h == "" {
		t.Fatal("no commit")
	}
	git(t, root, "add", "MEMORY.md")
	fsckClean(t, root)
}

func TestPackedRefsOnly(t *testing.T) {
	r, root := newRepo(t)
	writeFile(t, root, "MEMORY.md", "1\n")
	h1 := mustCommit(t, r, "MEMORY.md")
	git(t, root, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(root, ".git", "refs", "heads", "main")); err == nil {
		t.Fatal("ref still loose")
	}
	writeFile(t, root, "MEMORY.md", "2\n")
	h2 := mustCommit(t, r, "MEMORY.md")
	if git(t, root, "rev-parse", "HEAD~1") != h1 || git(t, root, "rev-parse", "HEAD") != h2 {
		t.Fatal("history wrong")
	}
	git(t, root, "gc", "-q") // objects now packed; reading through packs
	writeFile(t, root, "MEMORY.md", "3\n")
	mustCommit(t, r, "MEMORY.md")
	if s := git(t, root, "status", "--porcelain"); s != "" {
		t.Fatalf("status:\n%s", s)
	}
	fsckClean(t, root)
}

func TestPersonCommitBetweenMemctlCommits(t *testing.T) {
	r, root := newRepo(t)
	writeFile(t, root, "MEMORY.md", "1\n")
	mustCommit(t, r, "MEMORY.md")
	writeFile(t, root, "other.txt", "o\n")
	git(t, root, "add", "other.txt")
	git(t, root, "commit", "-q", "-m", "person")
	writeFile(t, root, "MEMORY.md", "2\n")
	mustCommit(t, r, "MEMORY.md")
	if git(t, root, "log", "--format=%s", "-3") != "memctl: update\nperson\nmemctl: update" {
		t.Fatal("history wrong")
	}
	if git(t, root, "ls-tree", "--name-only", "HEAD") != "MEMORY.md\nother.txt" {
		t.Fatal("person's commit lost")
	}
}

func TestConcurrentRefUpdateDetected(t *testing.T) {
	r, root := newRepo(t)
	writeFile(t, root, "MEMORY.md", "1\n")
	mustCommit(t, r, "MEMORY.md")
	// the branch moves (git update-ref, e.g. a fetch into it or a commit
	// from another worktree) after memctl read HEAD, before it locks the
	// ref; memctl holds index.lock at that point, so it is not git commit
	testHookBeforeRefLock = func() {
		testHookBeforeRefLock = nil
		h := git(t, root, "commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "person")
		git(t, root, "update-ref", "refs/heads/main", h)
	}
	defer func() { testHookBeforeRefLock = nil }()
	writeFile(t, root, "MEMORY.md", "2\n")
	_, err := r.Commit(context.Background(), CommitRequest{Paths: []string{"MEMORY.md"}, Message: "m"})
	if !errors.Is(err, ErrConcurrentUpdate) {
		t.Fatalf("err = %v", err)
	}
	if git(t, root, "log", "-1", "--format=%s") != "person" {
		t.Fatal("person's commit was overwritten")
	}
	// retrying succeeds on top of the person's commit
	mustCommit(t, r, "MEMORY.md")
	if git(t, root, "log", "--format=%s", "-2") != "memctl: update\nperson" {
		t.Fatal("retry not on top")
	}
	if s := git(t, root, "status", "--porcelain"); s != "" {
		t.Fatalf("status:\n%s", s)
	}
	fsckClean(t, root)
}

func TestPathSafety(t *testing.T) {
	ctx := context.Background()
	r, root := newRepo(t)
	writeFile(t, root, "MEMORY.md", "1\n")
	h1 := mustCommit(t, r, "MEMORY.md")
	outside := t.TempDir()
	writeFile(t, outside, "x.md", "secret\n")
	if err := os.Symlink(outside, filepath.Join(root, "topics")); err != nil {
		t.Fatal(err)
	}
	_, err := r.Commit(ctx, CommitRequest{Paths: []string{"MEMORY.md", "topics/x.md"}, Message: "m"})
	if err == nil || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("err = %v", err)
	}
	if git(t, root, "rev-parse", "HEAD") != h1 {
		t.Fatal("HEAD moved")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Fatal("something written outside")
	}
	if _, err := r.Changed(ctx, nil, []string{"topics"}); err == nil {
		t.Fatal("Changed followed a symlinked dir")
	}
	os.Symlink("/etc/passwd", filepath.Join(root, "link.md"))
	if _, err := r.Commit(ctx, CommitRequest{Paths: []string{"link.md"}, Message: "m"}); err == nil {
		t.Fatal("committed a symlink")
	}
	for _, p := range []string{"", "../x.md", "/etc/passwd", "a/../b.md", "./a.md", "a//b.md", "a/", ".git/config", "x/.GIT/y", "a\\b", "a\x00b"} {
		if _, err := r.Commit(ctx, CommitRequest{Paths: []string{p}, Message: "m"}); err == nil || !strings.Contains(err.Error(), "invalid memory path") {
			t.Errorf("path %q: err = %v", p, err)
		}
	}
	if git(t, root, "rev-parse", "HEAD") != h1 {
		t.Fatal("HEAD moved")
	}
}

func TestOpenRefusesUnsupported(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, setting string
		setup         func(t *testing.T, root string)
	}{
		{"skipHash", "index.skipHash", func(t *testing.T, root string) { git(t, root, "config", "index.skipHash", "true") }},
		{"manyFiles", "feature.manyFiles", func(t *testing.T, root string) { git(t, root, "config", "feature.manyFiles", "true") }},
		{"splitIndex", "core.splitIndex", func(t *testing.T, root string) { git(t, root, "config", "core.splitIndex", "true") }},
		{"sparseIndex", "index.sparse", func(t *testing.T, root string) { git(t, root, "config", "index.sparse", "true") }},
		{"sparseCheckout", "core.sparseCheckout", func(t *testing.T, root string) { git(t, root, "config", "core.sparseCheckout", "true") }},
		{"reftable", "extensions.refStorage=reftable", func(t *testing.T, root string) {
			git(t, root, "config", "core.repositoryformatversion", "1")
			git(t, root, "config", "extensions.refStorage", "reftable")
		}},
		{"sha256", "extensions.objectFormat=sha256", func(t *testing.T, root string) {
			os.RemoveAll(filepath.Join(root, ".git"))
			git(t, root, "init", "-q", "--object-format=sha256")
		}},
		{"globalManyFiles", "feature.manyFiles", func(t *testing.T, root string) {
			cfg := filepath.Join(t.TempDir(), "gitconfig")
			os.WriteFile(cfg, []byte("[feature]\n\tmanyFiles\n"), 0o644)
			t.Setenv("GIT_CONFIG_GLOBAL", cfg)
		}},
		{"bare", "bare", func(t *testing.T, root string) {
			os.RemoveAll(filepath.Join(root, ".git"))
			git(t, root, "init", "-q", "--bare")
		}},
		{"worktree", "linked worktree", func(t *testing.T, root string) {
			writeFile(t, root, "f", "f\n")
			git(t, root, "add", "f")
			git(t, root, "commit", "-q", "-m", "i")
			wt := filepath.Join(root, "wt")
			git(t, root, "worktree", "add", "-q", wt)
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			git(t, root, "init", "-q", "-b", "main")
			c.setup(t, root)
			dir := root
			if c.name == "worktree" {
				dir = filepath.Join(root, "wt")
			}
			_, err := Open(ctx, dir)
			if err == nil || !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), c.setting) {
				t.Fatalf("Open err = %v, want mention of %s", err, c.setting)
			}
		})
	}
	t.Run("notRepo", func(t *testing.T) {
		if _, err := Open(ctx, t.TempDir()); !errors.Is(err, ErrNotRepo) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("detached", func(t *testing.T) {
		r, root := newRepo(t)
		writeFile(t, root, "MEMORY.md", "1\n")
		mustCommit(t, r, "MEMORY.md")
		git(t, root, "checkout", "-q", "--detach")
		writeFile(t, root, "MEMORY.md", "2\n")
		_, err := r.Commit(ctx, CommitRequest{Paths: []string{"MEMORY.md"}, Message: "m"})
		if !errors.Is(err, ErrDetachedHead) {
			t.Fatalf("err = %v", err)
		}
		if _, ok, err := r.ReadHead(ctx, "MEMORY.md"); !ok || err != nil {
			t.Fatal("ReadHead on detached HEAD")
		}
	})
	t.Run("submoduleGitFile", func(t *testing.T) {
		// a .git file pointing at a plain git dir is supported
		root := t.TempDir()
		gd := filepath.Join(t.TempDir(), "store.git")
		git(t, root, "init", "-q", "-b", "main", "--separate-git-dir", gd)
		r, err := Open(ctx, root)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, root, "MEMORY.md", "1\n")
		mustCommit(t, r, "MEMORY.md")
		if s := git(t, root, "status", "--porcelain"); s != "" {
			t.Fatalf("status: %s", s)
		}
	})
}

func TestInitInsideExistingRepo(t *testing.T) {
	root := t.TempDir()
	git(t, root, "init", "-q", "-b", "main")
	sub := filepath.Join(root, "mem")
	r, created, err := Init(context.Background(), sub)
	if err != nil || created || r.Prefix() != "mem" {
		t.Fatalf("Init: %v %v %v", r, created, err)
	}
	// default branch from global config
	cfg := filepath.Join(t.TempDir(), "gitconfig")
	os.WriteFile(cfg, []byte("[init]\n\tdefaultBranch = memory\n"), 0o644)
	t.Setenv("GIT_CONFIG_GLOBAL", cfg)
	r2, created, err := Init(context.Background(), t.TempDir())
	if err != nil || !created {
		t.Fatal(err)
	}
	if got := git(t, r2.Root(), "symbolic-ref", "HEAD"); got != "refs/heads/memory" {
		t.Fatalf("HEAD %s", got)
	}
	git(t, r2.Root(), "status")
}

func TestRepairCorruptIndex(t *testing.T) {
	r, root := newRepo(t)
	writeFile(t, root, "MEMORY.md", "1\n")
	writeFile(t, root, "topics/a.md", "a\n")
	mustCommit(t, r, "MEMORY.md", "topics/a.md")
	idx := filepath.Join(root, ".git", "index")
	b, _ := os.ReadFile(idx)
	os.WriteFile(idx, b[:len(b)/2], 0o644) // as a crashed go-git writer leaves it
	if err := r.Check(context.Background()); err == nil {
		t.Fatal("Check passed a truncated index")
	}
	r2, err := Open(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if len(r2.Repaired()) != 1 || !strings.Contains(r2.Repaired()[0], "rebuilt the git index") {
		t.Fatalf("Repaired = %q", r2.Repaired())
	}
	if err := r2.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := git(t, root, "status", "--porcelain"); s != "" {
		t.Fatalf("status:\n%s", s)
	}
	// zero-length ref restored from reflog
	head := git(t, root, "rev-parse", "HEAD")
	os.WriteFile(filepath.Join(root, ".git", "refs", "heads", "main"), nil, 0o644)
	r3, err := Open(context.Background(), root)
	if err != nil {
		t.Fatal(err)
	}
	if len(r3.Repaired()) != 1 || git(t, root, "rev-parse", "HEAD") != head {
		t.Fatalf("ref not restored: %q", r3.Repaired())
	}
}
