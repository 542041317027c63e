package gitstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrDetachedHead is returned (wrapped) when HEAD does not name a branch.
var ErrDetachedHead = errors.New("HEAD is detached (not on a branch)")

// ErrConcurrentUpdate is returned (wrapped) when the branch moved between
// reading HEAD and updating it.
var ErrConcurrentUpdate = errors.New("branch was updated concurrently")

func validRefPath(ref string) bool {
	if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") || strings.Contains(ref, "//") ||
		strings.HasSuffix(ref, "/") || strings.HasSuffix(ref, ".lock") || strings.ContainsAny(ref, "\\\x00 ~^:?*[") {
		return false
	}
	for _, c := range strings.Split(ref, "/") {
		if c == "" || strings.HasPrefix(c, ".") {
			return false
		}
	}
	return true
}

// headRef returns the branch ref HEAD points at ("refs/heads/main"). It
// fails with ErrDetachedHead for a detached HEAD.
func (r *Repo) headRef() (string, error) {
	b, err := os.ReadFile(filepath.Join(r.gitDir, "HEAD"))
	if err != nil {
		return "", fmt.Errorf("git: read HEAD: %w", err)
	}
	s := strings.TrimRight(string(b), "\r\n")
	ref, ok := cutPrefix(s, "ref: ")
	if !ok {
		if plumbing.IsHash(strings.TrimSpace(s)) {
			return "", fmt.Errorf("git: %w; check out a branch first", ErrDetachedHead)
		}
		return "", fmt.Errorf("git: HEAD is corrupt (%q)", s)
	}
	ref = strings.TrimSpace(ref)
	if !strings.HasPrefix(ref, "refs/heads/") || !validRefPath(ref) {
		return "", fmt.Errorf("git: HEAD points to %q, not a branch: %w", ref, ErrUnsupported)
	}
	return ref, nil
}

// readRef returns a ref's value: the loose file if any, else packed-refs.
// exists is false for an unborn branch.
func (r *Repo) readRef(ref string) (h plumbing.Hash, exists bool, err error) {
	b, err := os.ReadFile(filepath.Join(r.gitDir, filepath.FromSlash(ref)))
	switch {
	case err == nil:
		s := strings.TrimSpace(string(b))
		if s == "" {
			return h, false, fmt.Errorf("git: ref %s is an empty file (corrupt; run repair)", ref)
		}
		if strings.HasPrefix(s, "ref:") {
			return h, false, fmt.Errorf("git: ref %s is a symbolic ref: %w", ref, ErrUnsupported)
		}
		if !plumbing.IsHash(s) {
			return h, false, fmt.Errorf("git: ref %s is corrupt (%q)", ref, s)
		}
		return plumbing.NewHash(s), true, nil
	case errors.Is(err, os.ErrNotExist), isNotDir(err):
	default:
		return h, false, err
	}
	return r.readPackedRef(ref)
}

func isNotDir(err error) bool {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return strings.Contains(pe.Err.Error(), "not a directory")
	}
	return false
}

// readPackedRef returns the commit ref names in packed-refs; ok is false
// when packed-refs does not hold it.
func (r *Repo) readPackedRef(ref string) (h plumbing.Hash, ok bool, err error) {
	err = r.eachPackedRef(func(name string, ph plumbing.Hash) bool {
		if name == ref {
			h, ok = ph, true
			return false
		}
		return true
	})
	return h, ok, err
}

// eachPackedRef calls fn with every ref of packed-refs and the object it
// names (peeled lines and comments skipped), until fn returns false. A
// missing packed-refs holds no ref.
func (r *Repo) eachPackedRef(fn func(name string, h plumbing.Hash) bool) error {
	f, err := os.Open(filepath.Join(r.gitDir, "packed-refs"))
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 || line[0] == '#' || line[0] == '^' {
			continue
		}
		h, name, ok := bytes.Cut(line, []byte(" "))
		if ok && plumbing.IsHash(string(h)) && !fn(string(name), plumbing.NewHash(string(h))) {
			return nil
		}
	}
	return sc.Err()
}

// head returns the branch and its current commit (zero when unborn).
func (r *Repo) head() (ref string, h plumbing.Hash, exists bool, err error) {
	ref, err = r.headRef()
	if err != nil {
		return "", h, false, err
	}
	h, exists, err = r.readRef(ref)
	return ref, h, exists, err
}

// formatSig formats "Name <email> unix tz" as in commit objects and reflogs.
func formatSig(s Signature, t time.Time) string {
	return fmt.Sprintf("%s <%s> %d %s", s.Name, s.Email, t.Unix(), t.Format("-0700"))
}

// appendReflog appends a reflog line (best effort, like git when the log
// exists or core.logAllRefUpdates is not false).
func (r *Repo) appendReflog(ref string, old, nw plumbing.Hash, sig Signature, when time.Time, msg string) {
	if v, set := r.cfg.boolean("core", "", "logallrefupdates"); set && !v {
		if _, err := os.Stat(filepath.Join(r.gitDir, "logs", filepath.FromSlash(ref))); err != nil {
			return
		}
	}
	msg = strings.Map(func(c rune) rune {
		if c == '\n' || c == '\r' || c == '\t' {
			return ' '
		}
		return c
	}, msg)
	line := fmt.Sprintf("%s %s %s\t%s\n", old, nw, formatSig(sig, when), msg)
	for _, p := range []string{ref, "HEAD"} {
		fn := filepath.Join(r.gitDir, "logs", filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(fn), 0o777); err != nil {
			continue
		}
		f, err := os.OpenFile(fn, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o666)
		if err != nil {
			continue
		}
		_, _ = f.WriteString(line)
		_ = f.Close()
	}
}
