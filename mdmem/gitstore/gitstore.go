// Package gitstore is the crash-safe, git-CLI-compatible commit layer of
// memctl.
//
// memctl keeps an agent's memory as Markdown files inside a git repository
// that people also use with the git CLI. go-git alone is not safe for that:
// it rewrites .git/index and refs in place, ignores git's *.lock files, never
// fsyncs, cannot commit a pathspec and cannot read some modern index formats.
// This package therefore uses go-git only to read objects, and writes loose
// objects, refs and the index itself, following git's own lock protocol
// (<file>.lock created exclusively, written, fsynced, renamed, directory
// fsynced). A commit records exactly the requested paths on top of HEAD, the
// way `git commit --only -- <paths>` does, and leaves every other index entry
// (for example a person's staged work) untouched.
//
// Commits run the repository's pre-commit and commit-msg hooks as git does
// (Repo.NoVerify skips them) and are signed when commit.gpgsign asks for it
// (gpg or ssh-keygen, as git runs them), or refused when they cannot be.
//
// Writers must be serialised with Repo.Lock. A *Repo must not be used from
// several goroutines at once. The git CLI is executed by this package only
// to purge history (PurgeUnreachable, Dirty); commits never need it.
package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/gofrs/flock"
)

// Signature is a commit identity.
type Signature struct {
	Name  string
	Email string
}

// MemctlSignature is the identity memctl uses for its own commits.
var MemctlSignature = Signature{Name: "memctl", Email: "memctl@localhost"}

// ErrNotRepo is returned (wrapped) by Open when no git repository contains the directory.
var ErrNotRepo = errors.New("not inside a git repository")

// ErrUnsupported is returned (wrapped) when the repository uses a setting or
// state this package cannot handle safely.
var ErrUnsupported = errors.New("unsupported git repository setting")

// ErrGitLocked is returned (wrapped) when a git lock file (index.lock or a
// ref's .lock) stays in place longer than the bounded retry period.
var ErrGitLocked = errors.New("git lock file exists")

// Repo is a git repository holding a memory directory.
type Repo struct {
	root     string // worktree root (symlinks resolved)
	gitDir   string // the .git directory
	prefix   string // memory dir relative to root, slash separated, "" for root
	cfg      *gitConfig
	repaired []string
	held     atomic.Pointer[flock.Flock] // non-nil while this Repo holds memctl.lock

	// NoVerify skips the pre-commit and commit-msg hooks (git commit
	// --no-verify).
	NoVerify bool
	// HookOutput receives the hooks' output (nil: standard error).
	HookOutput io.Writer
}

// Root returns the worktree root directory.
func (r *Repo) Root() string { return r.root }

// Prefix returns the memory directory relative to the worktree root, as a
// slash-separated path, or "" when the memory directory is the root.
func (r *Repo) Prefix() string { return r.prefix }

// GitDir returns the repository's git directory.
func (r *Repo) GitDir() string { return r.gitDir }

// Repaired returns the descriptions of what Open repaired automatically
// (for example a corrupt index rebuilt from HEAD); nil if nothing.
func (r *Repo) Repaired() []string { return r.repaired }

// Open finds the git repository containing dir. dir may be the worktree root
// or a subdirectory of it; in the latter case memory paths are prefixed by
// that subdirectory in the tree. It returns an error wrapping ErrNotRepo when
// there is none, and one wrapping ErrUnsupported, naming the setting, for
// repositories it cannot handle safely (index.skipHash, feature.manyFiles,
// core.splitIndex, sparse index/checkout, sha256 objects, reftable, linked
// worktrees, bare repositories). A corrupt index (for example truncated by a
// crashed go-git writer) is rebuilt from HEAD; see Repaired.
func Open(ctx context.Context, dir string) (*Repo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("git: open %s: %w", dir, err)
	}
	root, gitDir, err := discover(real)
	if err != nil {
		return nil, err
	}
	rel, err := filepath.Rel(root, real)
	if err != nil {
		return nil, err
	}
	prefix := filepath.ToSlash(rel)
	if prefix == "." {
		prefix = ""
	}
	if prefix == ".git" || strings.HasPrefix(prefix, ".git/") {
		return nil, fmt.Errorf("git: %s is inside the .git directory: %w", dir, ErrUnsupported)
	}
	cfg, err := loadConfig(gitDir)
	if err != nil {
		return nil, err
	}
	r := &Repo{root: root, gitDir: gitDir, prefix: prefix, cfg: cfg}
	if err := r.checkSupported(); err != nil {
		return nil, err
	}
	// Repair what is safe to repair without asking: our own stale lock
	// files and an index that no longer decodes (derived state).
	// Markers and a broken index are only conclusive while we hold
	// memctl.lock; if another memctl process is active, leave it alone.
	if needs, _ := r.needsRepair(); needs {
		if unlock, err := r.Lock(ctx, 0); err == nil {
			fixed, err := r.Repair(ctx)
			_ = unlock()
			if err != nil {
				return nil, err
			}
			r.repaired = fixed
		}
	}
	return r, nil
}

// discover walks up from dir to find a worktree with a .git directory (or a
// .git file pointing at a non-linked git directory, as used by submodules).
func discover(dir string) (root, gitDir string, err error) {
	for d := dir; ; {
		p := filepath.Join(d, ".git")
		fi, err := os.Stat(p)
		if err == nil {
			if fi.IsDir() {
				return d, p, nil
			}
			gd, err := readGitFile(p)
			if err != nil {
				return "", "", err
			}
			return d, gd, nil
		}
		if isBareDir(d) {
			return "", "", fmt.Errorf("git: %s is a bare repository (no worktree): %w", d, ErrUnsupported)
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", "", fmt.Errorf("git: %s: %w", dir, ErrNotRepo)
		}
		d = parent
	}
}

func isBareDir(d string) bool {
	for _, n := range []string{"HEAD", "objects", "refs"} {
		if _, err := os.Stat(filepath.Join(d, n)); err != nil {
			return false
		}
	}
	_, err := os.Stat(filepath.Join(d, "config"))
	return err == nil
}

// readGitFile resolves a ".git" file ("gitdir: <path>"). Linked worktrees
// (whose git dir has a commondir file) are refused.
func readGitFile(p string) (string, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", err
	}
	s := strings.TrimSpace(string(b))
	if !strings.HasPrefix(s, "gitdir:") {
		return "", fmt.Errorf("git: %s is not a valid gitfile: %w", p, ErrNotRepo)
	}
	gd := strings.TrimSpace(strings.TrimPrefix(s, "gitdir:"))
	if !filepath.IsAbs(gd) {
		gd = filepath.Join(filepath.Dir(p), gd)
	}
	if _, err := os.Stat(filepath.Join(gd, "commondir")); err == nil {
		return "", fmt.Errorf("git: %s is a linked worktree (git worktree add): %w", filepath.Dir(p), ErrUnsupported)
	}
	if fi, err := os.Stat(gd); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("git: gitdir %s named by %s does not exist: %w", gd, p, ErrNotRepo)
	}
	return gd, nil
}

// Init makes dir a git repository if it is not inside one already, then
// Opens it. The default branch is init.defaultBranch from the global git
// configuration if set, else "main". created reports whether a repository
// was created.
func Init(ctx context.Context, dir string) (repo *Repo, created bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, false, err
	}
	r, err := Open(ctx, dir)
	if err == nil {
		return r, false, nil
	}
	if !errors.Is(err, ErrNotRepo) {
		return nil, false, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, false, err
	}
	branch := "main"
	if g, err := loadGlobalConfig(); err == nil {
		if b := g.get("init", "", "defaultbranch"); b != "" && validBranchName(b) {
			branch = b
		}
	}
	if err := initLayout(filepath.Join(abs, ".git"), branch); err != nil {
		return nil, false, err
	}
	r, err = Open(ctx, dir)
	if err != nil {
		return nil, true, err
	}
	return r, true, nil
}

func validBranchName(b string) bool {
	if b == "" || strings.HasPrefix(b, "-") || strings.HasSuffix(b, ".lock") || strings.HasSuffix(b, "/") ||
		strings.HasSuffix(b, ".") || strings.Contains(b, "..") || strings.Contains(b, "//") || strings.Contains(b, "@{") {
		return false
	}
	for _, c := range b {
		if c <= ' ' || c == 0x7f || strings.ContainsRune("~^:?*[\\", c) {
			return false
		}
	}
	for _, comp := range strings.Split(b, "/") {
		if strings.HasPrefix(comp, ".") {
			return false
		}
	}
	return true
}

// initLayout creates a minimal git directory the git CLI accepts.
func initLayout(gitDir, branch string) error {
	tmp := gitDir + ".memctl-init"
	_ = os.RemoveAll(tmp)
	for _, d := range []string{"objects/info", "objects/pack", "refs/heads", "refs/tags", "info"} {
		if err := os.MkdirAll(filepath.Join(tmp, d), 0o777); err != nil {
			return err
		}
	}
	files := map[string]string{
		"HEAD":        "ref: refs/heads/" + branch + "\n",
		"description": "Unnamed repository; edit this file 'description' to name the repository.\n",
		"config": "[core]\n\trepositoryformatversion = 0\n\tfilemode = " + fileModeDefault() +
			"\n\tbare = false\n\tlogallrefupdates = true\n",
		"info/exclude": "# git ls-files --others --exclude-from=.git/info/exclude\n",
	}
	for name, content := range files {
		if err := writeFileSync(filepath.Join(tmp, name), []byte(content), 0o666); err != nil {
			return err
		}
	}
	// Publish the whole directory at once so a crash never leaves a
	// half-initialised .git that would be mistaken for a repository.
	if err := os.Rename(tmp, gitDir); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("git: init: %w", err)
	}
	return syncDir(filepath.Dir(gitDir))
}
