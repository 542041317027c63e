package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// Talking to a remote: memctl sync runs the git command for everything
// that crosses the network (fetch, push, ls-remote), so ssh, https,
// credential helpers and proxies work as the person set them up; go-git
// cannot use credential helpers and its ssh differs from OpenSSH. git runs
// without a terminal: it never prompts (GIT_TERMINAL_PROMPT=0, ssh in
// batch mode), and each call has a timeout.

// ErrRemote is returned (wrapped) when the remote cannot be reached or
// refuses the credentials: nothing changed locally.
var ErrRemote = errors.New("remote unreachable")

// ErrPushRejected is returned (wrapped) when the remote branch moved since
// it was fetched (a non-fast-forward push was refused), or another push
// held the remote branch's lock at that moment: either way fetching again
// and pushing again is the answer.
var ErrPushRejected = errors.New("push rejected: the remote moved")

// RemoteTimeout bounds one network call to a remote.
var RemoteTimeout = 60 * time.Second

// gitCLI runs git in the repository with a non-interactive environment.
func (r *Repo) gitCLI(ctx context.Context, timeout time.Duration, args ...string) (stdout, stderr []byte, err error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "git", args...)
	cmd.Dir = r.root
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GCM_INTERACTIVE=never", "GIT_ASKPASS=", "SSH_ASKPASS=",
		"LC_ALL=C", "GIT_DIR="+r.gitDir, "GIT_WORK_TREE="+r.root)
	if os.Getenv("GIT_SSH_COMMAND") == "" && os.Getenv("GIT_SSH") == "" {
		cmd.Env = append(cmd.Env, "GIT_SSH_COMMAND=ssh -o BatchMode=yes")
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	// Ctrl-C (or a timeout) interrupts git as a terminal would, so it
	// removes its own lock files; a git killed outright would leave them.
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("git %s: no answer within %s: %w", args[0], timeout, ErrRemote)
	} else if ctx.Err() != nil {
		err = ctx.Err()
	}
	return out.Bytes(), errb.Bytes(), err
}

// gitCmdErr is a failed git command with the last line it printed.
func gitCmdErr(what string, stderr []byte, err error) error {
	msg := strings.TrimSpace(string(stderr))
	if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
		msg = strings.TrimSpace(msg[i+1:])
	}
	if msg == "" {
		msg = err.Error()
	}
	return fmt.Errorf("git %s: %s", what, redactURL(msg))
}

// redactURL hides a password written into a URL in a message.
func redactURL(s string) string {
	for _, f := range strings.Fields(s) {
		f = strings.Trim(f, "'\".,:;()")
		if u, err := url.Parse(f); err == nil && u.User != nil {
			if _, has := u.User.Password(); has {
				s = strings.ReplaceAll(s, f, u.Redacted())
			}
		}
	}
	return s
}

// RemoteURL returns the URL of a configured remote. A URL that carries a
// password is refused: it would sit in .git/config and in logs (use a
// credential helper).
func (r *Repo) RemoteURL(ctx context.Context, remote string) (string, error) {
	if !validRemoteName(remote) {
		return "", fmt.Errorf("%q is not a remote name", remote)
	}
	out, stderr, err := r.gitCLI(ctx, 10*time.Second, "remote", "get-url", "--", remote)
	if err != nil {
		return "", gitCmdErr("remote get-url "+remote, stderr, err)
	}
	raw := strings.TrimSpace(string(out))
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if _, has := u.User.Password(); has {
			return "", fmt.Errorf("the URL of remote %s holds a password (%s); memctl refuses to send it: store it in a credential helper (git config credential.helper) and remove it from the URL", remote, u.Redacted())
		}
	}
	return raw, nil
}

func validRemoteName(s string) bool {
	if s == "" || strings.HasPrefix(s, "-") || len(s) > 200 {
		return false
	}
	for _, c := range s {
		if c <= ' ' || c == 0x7f || strings.ContainsRune(`~^:?*[\`, c) {
			return false
		}
	}
	return !strings.Contains(s, "..")
}

// Upstream returns the remote and branch the current branch tracks
// (branch.<name>.remote and .merge), ok false when it tracks none.
func (r *Repo) Upstream(ctx context.Context) (remote, branch string, ok bool) {
	ref, err := r.headRef()
	if err != nil {
		return "", "", false
	}
	name := strings.TrimPrefix(ref, "refs/heads/")
	out, _, err := r.gitCLI(ctx, 10*time.Second, "config", "--get", "branch."+name+".remote")
	if err != nil {
		return "", "", false
	}
	remote = strings.TrimSpace(string(out))
	out, _, err = r.gitCLI(ctx, 10*time.Second, "config", "--get", "branch."+name+".merge")
	if err != nil {
		return remote, name, remote != ""
	}
	return remote, strings.TrimPrefix(strings.TrimSpace(string(out)), "refs/heads/"), remote != ""
}

// Branch returns the current branch's short name.
func (r *Repo) Branch() (string, error) {
	ref, err := r.headRef()
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(ref, "refs/heads/"), nil
}

// Fetch fetches a remote branch into refs/remotes/<remote>/<branch> and
// returns its commit; "" when the remote has no such branch (an empty
// remote). A shallow clone is deepened to its full history first: the
// merge needs the merge base.
func (r *Repo) Fetch(ctx context.Context, remote, branch string) (string, error) {
	if !validBranchName(branch) {
		return "", fmt.Errorf("%q is not a branch name", branch)
	}
	out, stderr, err := r.gitCLI(ctx, RemoteTimeout, "ls-remote", "--heads", "--", remote, "refs/heads/"+branch)
	if err != nil {
		return "", fmt.Errorf("%w: %w", gitCmdErr("ls-remote "+remote, stderr, err), ErrRemote)
	}
	if strings.TrimSpace(string(out)) == "" {
		return "", nil
	}
	args := []string{"fetch", "--no-tags", "--quiet"}
	if _, err := os.Stat(filepath.Join(r.gitDir, "shallow")); err == nil {
		args = append(args, "--unshallow")
	}
	track := "refs/remotes/" + remote + "/" + branch
	args = append(args, "--", remote, "+refs/heads/"+branch+":"+track)
	for attempt := 1; ; attempt++ {
		_, stderr, err := r.gitCLI(ctx, 5*RemoteTimeout, args...)
		if err == nil {
			break
		}
		// Another git process updating the same ref (a git fetch a
		// killed memctl left running: it finishes on its own, and
		// releases its lock; or the person's own): local, and over in a
		// moment.
		if local := bytes.Contains(stderr, []byte("cannot lock ref")) || bytes.Contains(stderr, []byte(".lock': File exists")); local && attempt < 5 && ctx.Err() == nil {
			time.Sleep(time.Duration(attempt) * 200 * time.Millisecond)
			continue
		} else if local {
			return "", gitCmdErr("fetch "+remote, stderr, err)
		}
		return "", fmt.Errorf("%w: %w", gitCmdErr("fetch "+remote, stderr, err), ErrRemote)
	}
	h, ok, err := r.readRef(track)
	if err != nil || !ok {
		return "", fmt.Errorf("git fetch %s: %s did not appear: %v", remote, track, err)
	}
	return h.String(), nil
}

// Push pushes commit to the remote branch, never forced. It fails with
// ErrPushRejected when the remote branch is no longer an ancestor of it.
func (r *Repo) Push(ctx context.Context, remote, commit, branch string) error {
	if !plumbing.IsHash(commit) || !validBranchName(branch) {
		return fmt.Errorf("git push: bad commit %q or branch %q", commit, branch)
	}
	_, stderr, err := r.gitCLI(ctx, 5*RemoteTimeout, "push", "--quiet", "--no-verify", "--", remote, commit+":refs/heads/"+branch)
	if err == nil {
		return nil
	}
	if pushRefused(stderr) {
		return fmt.Errorf("%w: %s", ErrPushRejected, gitCmdErr("push "+remote, refusalLine(stderr), err))
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, ErrRemote) {
		return err
	}
	return fmt.Errorf("%w: %w", gitCmdErr("push "+remote, stderr, err), ErrRemote)
}

// pushRefused reports whether git push's stderr says the remote branch
// was not where the push expected (it moved: non-fast-forward), or was
// being updated by another push at that moment (its ref lock was held:
// "[remote rejected] … (failed to update ref)", "cannot lock ref"), as
// opposed to a remote that cannot be reached or refuses the credentials.
func pushRefused(stderr []byte) bool {
	for _, s := range []string{"non-fast-forward", "fetch first", "[rejected]", "cannot lock ref", "failed to update ref", "incorrect old value"} {
		if bytes.Contains(stderr, []byte(s)) {
			return true
		}
	}
	return false
}

// refusalLine returns the line of git push's stderr that says why the
// branch was refused (" ! [rejected] main -> main (fetch first)"), or all
// of stderr when there is none.
func refusalLine(stderr []byte) []byte {
	for _, l := range bytes.Split(stderr, []byte("\n")) {
		if bytes.Contains(l, []byte("rejected]")) {
			return bytes.TrimSpace(l)
		}
	}
	return stderr
}

// PushLeased replaces the remote branch with commit, only if the remote
// branch is still at expect (git push --force-with-lease): how a history
// purge is published.
func (r *Repo) PushLeased(ctx context.Context, remote, commit, branch, expect string) error {
	if !plumbing.IsHash(commit) || !plumbing.IsHash(expect) || !validBranchName(branch) {
		return fmt.Errorf("git push: bad commit %q, %q or branch %q", commit, expect, branch)
	}
	_, stderr, err := r.gitCLI(ctx, 5*RemoteTimeout, "push", "--quiet", "--no-verify",
		"--force-with-lease=refs/heads/"+branch+":"+expect, "--", remote, commit+":refs/heads/"+branch)
	if err == nil {
		return nil
	}
	if strings.Contains(string(stderr), "stale info") || strings.Contains(string(stderr), "[rejected]") {
		return fmt.Errorf("%w: %s", ErrPushRejected, gitCmdErr("push "+remote, stderr, err))
	}
	return fmt.Errorf("%w: %w", gitCmdErr("push "+remote, stderr, err), ErrRemote)
}

// MergeBase returns a best common ancestor of two commits, "" when they
// share no history. When there are several (a criss-cross history), the
// smallest hash: the same whichever side asks.
func (r *Repo) MergeBase(ctx context.Context, a, b string) (string, error) {
	out, stderr, err := r.gitCLI(ctx, time.Minute, "merge-base", "--all", "--", a, b)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 && len(bytes.TrimSpace(stderr)) == 0 {
		return "", nil
	}
	if err != nil {
		return "", gitCmdErr("merge-base", stderr, err)
	}
	bases := strings.Fields(string(out))
	if len(bases) == 0 {
		return "", nil
	}
	sort.Strings(bases)
	return bases[0], nil
}

// ReadRefHash returns a ref's commit, "" when it does not exist.
func (r *Repo) ReadRefHash(ref string) (string, error) {
	if !validRefPath(ref) {
		return "", fmt.Errorf("invalid ref %q", ref)
	}
	h, ok, err := r.readRef(ref)
	if err != nil || !ok {
		return "", err
	}
	return h.String(), nil
}

// SetRef points a memctl ref (refs/memctl/…) at a commit, through git's
// own ref update (lock, reflog).
func (r *Repo) SetRef(ctx context.Context, ref, commit, reason string) error {
	if !strings.HasPrefix(ref, "refs/memctl/") || !validRefPath(ref) || !plumbing.IsHash(commit) {
		return fmt.Errorf("refusing to set ref %q", ref)
	}
	if _, stderr, err := r.gitCLI(ctx, 30*time.Second, "update-ref", "-m", reason, ref, commit); err != nil {
		return gitCmdErr("update-ref "+ref, stderr, err)
	}
	return nil
}

// TreeHashes returns the blob hash of every file of a commit's tree,
// by memory-relative path, without reading the blobs ("" = none).
func (r *Repo) TreeHashes(ctx context.Context, commit string) (map[string]string, error) {
	out := map[string]string{}
	if commit == "" {
		return out, nil
	}
	if !plumbing.IsHash(commit) {
		return nil, fmt.Errorf("git: %q is not a commit hash", commit)
	}
	o := r.newObjStore()
	defer o.close()
	tree, err := o.commitTree(plumbing.NewHash(commit))
	if err != nil {
		return nil, err
	}
	if r.prefix != "" {
		e, found, err := o.lookup(tree, r.prefix)
		if err != nil || !found || !e.isTree() {
			return out, err
		}
		tree = e.hash
	}
	enter := func(_ plumbing.Hash, dir string) (bool, error) { return path.Base(dir) != ".git", ctx.Err() }
	file := func(p string, e treeEntry) error {
		if e.mode != modeGitlnk && e.mode != modeLink {
			out[p] = e.hash.String()
		}
		return nil
	}
	return out, o.walkTree(tree, "", enter, file)
}

// ChangedPaths returns the memory-relative paths whose blob differs
// between two commits ("" = the empty tree), sorted.
func (r *Repo) ChangedPaths(ctx context.Context, from, to string) ([]Change, error) {
	a, err := r.TreeHashes(ctx, from)
	if err != nil {
		return nil, err
	}
	b, err := r.TreeHashes(ctx, to)
	if err != nil {
		return nil, err
	}
	var out []Change
	for p, h := range b {
		if a[p] != h {
			out = append(out, Change{Path: p, Old: a[p], New: h})
		}
	}
	for p, h := range a {
		if _, ok := b[p]; !ok {
			out = append(out, Change{Path: p, Old: h})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out, nil
}

// CommitsBetween lists the commits reachable from to and not from from
// ("" = all of to's history), newest first, at most limit.
func (r *Repo) CommitsBetween(ctx context.Context, from, to string, limit int) ([]string, error) {
	args := []string{"rev-list", fmt.Sprintf("--max-count=%d", limit), to}
	if from != "" {
		args = append(args, "^"+from)
	}
	args = append(args, "--")
	out, stderr, err := r.gitCLI(ctx, time.Minute, args...)
	if err != nil {
		return nil, gitCmdErr("rev-list", stderr, err)
	}
	return strings.Fields(string(out)), nil
}

// CommitInfo is one commit's parents and message.
type CommitInfo struct {
	Hash     string
	Parents  []string
	Message  string
	Trailers map[string][]string
}

// ReadCommit reads a commit object.
func (r *Repo) ReadCommit(ctx context.Context, hash string) (*CommitInfo, error) {
	if !plumbing.IsHash(hash) {
		return nil, fmt.Errorf("git: %q is not a commit hash", hash)
	}
	o := r.newObjStore()
	defer o.close()
	typ, data, err := o.read(plumbing.NewHash(hash))
	if err != nil {
		return nil, err
	}
	if typ != plumbing.CommitObject {
		return nil, fmt.Errorf("git: %s is a %s, not a commit", hash, typ)
	}
	c := &CommitInfo{Hash: hash}
	head, msg, _ := bytes.Cut(data, []byte("\n\n"))
	for _, l := range strings.Split(string(head), "\n") {
		if p, ok := strings.CutPrefix(l, "parent "); ok {
			c.Parents = append(c.Parents, p)
		}
	}
	c.Message = string(msg)
	c.Trailers = ParseTrailers(c.Message)
	return c, nil
}

// Contains reports whether commit anc is in the history of desc (or is
// desc), through git merge-base --is-ancestor: whole histories, no limit.
func (r *Repo) Contains(ctx context.Context, desc, anc string) (bool, error) {
	if !plumbing.IsHash(desc) || !plumbing.IsHash(anc) {
		return false, fmt.Errorf("git: bad commits %q, %q", desc, anc)
	}
	_, stderr, err := r.gitCLI(ctx, time.Minute, "merge-base", "--is-ancestor", "--", anc, desc)
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == 1 {
		return false, nil
	}
	if err != nil {
		return false, gitCmdErr("merge-base --is-ancestor", stderr, err)
	}
	return true, nil
}

// MergeHeads returns the commits a person's unfinished git merge is
// merging in (.git/MERGE_HEAD), nil when no merge is in progress.
func (r *Repo) MergeHeads() ([]string, error) {
	b, err := os.ReadFile(filepath.Join(r.gitDir, "MERGE_HEAD"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(b)), nil
}

// AbortMerge ends a person's unfinished git merge (git merge --abort):
// the index and the merged files go back to HEAD; other uncommitted
// changes stay.
func (r *Repo) AbortMerge(ctx context.Context) error {
	if _, stderr, err := r.gitCLI(ctx, time.Minute, "merge", "--abort"); err != nil {
		return gitCmdErr("merge --abort", stderr, err)
	}
	return nil
}

// RefsUnder lists the refs under the given prefixes with their objects.
func (r *Repo) RefsUnder(ctx context.Context, prefixes ...string) (map[string]string, error) {
	out, stderr, err := r.gitCLI(ctx, 30*time.Second, append([]string{"for-each-ref", "--format=%(refname) %(objectname)"}, prefixes...)...)
	if err != nil {
		return nil, gitCmdErr("for-each-ref", stderr, err)
	}
	refs := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if name, h, ok := strings.Cut(l, " "); ok {
			refs[name] = h
		}
	}
	return refs, nil
}

// DeleteRef deletes a memctl or remote-tracking ref.
func (r *Repo) DeleteRef(ctx context.Context, ref string) error {
	if !(strings.HasPrefix(ref, "refs/memctl/") || strings.HasPrefix(ref, "refs/remotes/")) || !validRefPath(ref) {
		return fmt.Errorf("refusing to delete ref %q", ref)
	}
	if _, stderr, err := r.gitCLI(ctx, 30*time.Second, "update-ref", "-d", ref); err != nil {
		return gitCmdErr("update-ref -d "+ref, stderr, err)
	}
	return nil
}

// RemoteHead returns the commit of a remote branch without fetching
// anything ("" when the branch does not exist).
func (r *Repo) RemoteHead(ctx context.Context, remote, branch string) (string, error) {
	out, stderr, err := r.gitCLI(ctx, RemoteTimeout, "ls-remote", "--heads", "--", remote, "refs/heads/"+branch)
	if err != nil {
		return "", fmt.Errorf("%w: %w", gitCmdErr("ls-remote "+remote, stderr, err), ErrRemote)
	}
	h, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\t")
	return h, nil
}

// MergeDriverName is the name of memctl's git merge driver.
const MergeDriverName = "memctl"

// MergeDriverPaths are the paths the merge driver is registered for.
var MergeDriverPaths = []string{"MEMORY.md", "topics/*.md", ".memctl/state.json", ".memctl/consumed/*.log", ".memctl/tombstones.jsonl"}

// InstallMergeDriver registers memctl's merge driver for this clone only:
// merge.memctl.driver in .git/config, and the memory paths in
// .git/info/attributes (never committed: forges and CI clones would not
// run it anyway). exe is the memctl binary to run.
func (r *Repo) InstallMergeDriver(ctx context.Context, exe string) (attrs string, err error) {
	quoted := "'" + strings.ReplaceAll(exe, "'", `'\''`) + "'"
	for _, kv := range [][2]string{
		{"merge." + MergeDriverName + ".name", "memctl: entry-level merge of memory files"},
		{"merge." + MergeDriverName + ".driver", quoted + " merge-file %O %A %B %P"},
	} {
		if _, stderr, err := r.gitCLI(ctx, 10*time.Second, "config", "--local", kv[0], kv[1]); err != nil {
			return "", gitCmdErr("config "+kv[0], stderr, err)
		}
	}
	p := filepath.Join(r.gitDir, "info", "attributes")
	old, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	text := string(old)
	for _, path := range MergeDriverPaths {
		line := path + " merge=" + MergeDriverName
		if !strings.Contains("\n"+text, "\n"+line+"\n") {
			if text != "" && !strings.HasSuffix(text, "\n") {
				text += "\n"
			}
			text += line + "\n"
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	if text != string(old) {
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	return p, nil
}

// TextMergeFile is git's own line merge of one file (git merge-file): the
// result, with conflict markers where both sides changed the same lines,
// replaces ours. conflicts is true when it left markers.
func TextMergeFile(ctx context.Context, ours, base, theirs string) (conflicts bool, err error) {
	cmd := exec.CommandContext(ctx, "git", "merge-file", "-L", "ours", "-L", "base", "-L", "theirs", "--", ours, base, theirs)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 128 {
		return true, nil
	}
	if err != nil {
		return false, fmt.Errorf("git merge-file: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return false, nil
}
