package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrHookFailed is returned (wrapped) when a pre-commit or commit-msg hook
// exits non-zero: nothing is committed.
var ErrHookFailed = errors.New("git hook failed")

// ErrSigning is returned (wrapped) when commit.gpgsign asks for signed
// commits and memctl cannot sign: it never commits unsigned instead.
var ErrSigning = errors.New("cannot sign the commit")

// hookPath returns the executable hook of that name, or "" when there is
// none (core.hooksPath, relative to the worktree root, else .git/hooks).
func (r *Repo) hookPath(name string) string {
	dir := filepath.Join(r.gitDir, "hooks")
	if hp := r.cfg.get("core", "", "hookspath"); hp != "" {
		if strings.HasPrefix(hp, "~/") {
			if home, err := os.UserHomeDir(); err == nil {
				hp = filepath.Join(home, hp[2:])
			}
		}
		if !filepath.IsAbs(hp) {
			hp = filepath.Join(r.root, hp)
		}
		dir = hp
	}
	p := filepath.Join(dir, name)
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
		return ""
	}
	return p
}

// runHook runs a hook as git does: from the worktree root, stdin empty,
// its output to HookOutput (default: standard error), with extra
// environment variables.
func (r *Repo) runHook(ctx context.Context, name string, env []string, args ...string) error {
	p := r.hookPath(name)
	if p == "" {
		return nil
	}
	cmd := exec.CommandContext(ctx, p, args...)
	cmd.Dir = r.root
	cmd.Env = append(os.Environ(), env...)
	var tail bytes.Buffer
	out := r.HookOutput
	if out == nil {
		out = os.Stderr
	}
	cmd.Stdout = io.MultiWriter(out, &tail)
	cmd.Stderr = io.MultiWriter(out, &tail)
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: the %s hook (%s) refused the commit (%w); nothing was committed", ErrHookFailed, name, p, err)
	}
	return nil
}

// runCommitHooks runs pre-commit, with GIT_INDEX_FILE naming an index of
// exactly what the commit will hold (HEAD plus memctl's paths, as `git
// commit --only` gives its hooks), then commit-msg on the message, which
// it may edit. It returns the message to commit. A commit-msg hook that
// drops memctl's trailers is refused: recovery and `memctl log` read them.
func (r *Repo) runCommitHooks(ctx context.Context, o *objStore, oldTree plumbing.Hash, files []*worktreeFile, msg string) (string, error) {
	if r.NoVerify {
		return msg, nil
	}
	if r.hookPath("pre-commit") != "" {
		ix, err := r.indexFromTree(o, oldTree)
		if err != nil {
			return "", err
		}
		for _, wf := range files {
			if wf.missing {
				ix.removeEntry(wf.treePath)
				continue
			}
			e := &idxEntry{name: wf.treePath, hash: wf.hash, mode: 0o100644}
			if wf.mode == modeExec {
				e.mode = 0o100755
			}
			if wf.fi != nil {
				fillStat(e, wf.fi)
			}
			ix.setEntry(e)
		}
		ix.sort()
		tmp := filepath.Join(r.gitDir, "memctl-hook-index-"+randHex(6))
		if err := os.WriteFile(tmp, ix.encode(), 0o644); err != nil {
			return "", err
		}
		defer os.Remove(tmp)
		if err := r.runHook(ctx, "pre-commit", []string{"GIT_INDEX_FILE=" + tmp}); err != nil {
			return "", err
		}
	}
	if r.hookPath("commit-msg") == "" {
		return msg, nil
	}
	f := filepath.Join(r.gitDir, "COMMIT_EDITMSG")
	if err := os.WriteFile(f, []byte(msg), 0o644); err != nil {
		return "", err
	}
	if err := r.runHook(ctx, "commit-msg", []string{"GIT_EDITOR=:"}, f); err != nil {
		return "", err
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return "", err
	}
	edited := string(b)
	for _, l := range strings.Split(msg, "\n") {
		if strings.HasPrefix(l, "Memctl-") && !strings.Contains(edited, l+"\n") {
			return "", fmt.Errorf("%w: the commit-msg hook removed memctl's trailer %q; nothing was committed", ErrHookFailed, l)
		}
	}
	if strings.TrimSpace(edited) == "" {
		return "", fmt.Errorf("%w: the commit-msg hook emptied the message; nothing was committed", ErrHookFailed)
	}
	return strings.TrimRight(edited, " \t\r\n") + "\n", nil
}

// signer returns the function that signs a commit payload as
// commit.gpgsign asks (nil when it does not). OpenPGP (gpg) and SSH
// (ssh-keygen -Y sign) keys are supported, as git runs them; x509 and a
// missing key are refused with what to set.
func (r *Repo) signer() (func(ctx context.Context, payload []byte) (string, error), error) {
	if on, _ := r.cfg.boolean("commit", "", "gpgsign"); !on {
		return nil, nil
	}
	format := strings.ToLower(r.cfg.get("gpg", "", "format"))
	key := r.cfg.get("user", "", "signingkey")
	program := func(def string) string {
		if p := r.cfg.get("gpg", format, "program"); p != "" {
			return p
		}
		if p := r.cfg.get("gpg", "", "program"); p != "" && format == "openpgp" {
			return p
		}
		return def
	}
	switch format {
	case "", "openpgp":
		format = "openpgp"
		if key == "" {
			return nil, fmt.Errorf("%w: commit.gpgsign is true but user.signingkey is not set; memctl commits as %q, for which gpg has no key: set user.signingkey (git config user.signingkey KEYID) or commit.gpgsign=false for this repository", ErrSigning, MemctlSignature.Name+" <"+MemctlSignature.Email+">")
		}
		prog := program("gpg")
		return func(ctx context.Context, payload []byte) (string, error) {
			cmd := exec.CommandContext(ctx, prog, "--status-fd=2", "-bsau", key)
			cmd.Stdin = bytes.NewReader(payload)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil || !strings.Contains(errb.String(), "[GNUPG:] SIG_CREATED ") {
				return "", fmt.Errorf("%w: %s could not sign with key %s (%w): %s", ErrSigning, prog, key, err, lastLines(errb.String(), 3))
			}
			return out.String(), nil
		}, nil
	case "ssh":
		if key == "" {
			return nil, fmt.Errorf("%w: commit.gpgsign is true with gpg.format=ssh but user.signingkey is not set: set it to the path of your SSH key", ErrSigning)
		}
		literal := strings.HasPrefix(key, "key::") || strings.HasPrefix(key, "ssh-")
		prog := program("ssh-keygen")
		return func(ctx context.Context, payload []byte) (string, error) {
			dir, err := os.MkdirTemp("", "memctl-sign-")
			if err != nil {
				return "", err
			}
			defer os.RemoveAll(dir)
			buf := filepath.Join(dir, "commit")
			if err := os.WriteFile(buf, payload, 0o600); err != nil {
				return "", err
			}
			args := []string{"-Y", "sign", "-n", "git", "-f"}
			if literal {
				kf := filepath.Join(dir, "key.pub")
				if err := os.WriteFile(kf, []byte(strings.TrimPrefix(key, "key::")+"\n"), 0o600); err != nil {
					return "", err
				}
				args = append(args, kf, "-U")
			} else {
				k := key
				if strings.HasPrefix(k, "~/") {
					if home, err := os.UserHomeDir(); err == nil {
						k = filepath.Join(home, k[2:])
					}
				}
				args = append(args, k)
			}
			cmd := exec.CommandContext(ctx, prog, append(args, buf)...)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Run(); err != nil {
				return "", fmt.Errorf("%w: %s could not sign with %s (%w): %s", ErrSigning, prog, key, err, lastLines(errb.String(), 3))
			}
			sig, err := os.ReadFile(buf + ".sig")
			if err != nil {
				return "", fmt.Errorf("%w: %s wrote no signature: %w", ErrSigning, prog, err)
			}
			return string(sig), nil
		}, nil
	default:
		return nil, fmt.Errorf("%w: commit.gpgsign is true with gpg.format=%s, which memctl cannot sign with (openpgp and ssh only): use one of those, or set commit.gpgsign=false for this repository", ErrSigning, format)
	}
}

// withSignature inserts a gpgsig header into a commit payload.
func withSignature(payload []byte, sig string) []byte {
	head, msg, _ := bytes.Cut(payload, []byte("\n\n"))
	sig = strings.TrimRight(sig, "\n")
	var b bytes.Buffer
	b.Write(head)
	b.WriteString("\ngpgsig ")
	b.WriteString(strings.ReplaceAll(sig, "\n", "\n "))
	b.WriteString("\n\n")
	b.Write(msg)
	return b.Bytes()
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "; ")
}
