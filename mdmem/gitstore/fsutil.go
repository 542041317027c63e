package gitstore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/memctl/memctl/mdmem/atomicfile"
)

// syncEnabled can be cleared by tests that measure locking, not durability
// (fsync dominates their run time on slow disks).
var syncEnabled = true

// writeFileSync writes data to name (which must not exist or is truncated)
// and fsyncs it.
func writeFileSync(name string, data []byte, perm os.FileMode) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if !syncEnabled {
		return f.Close()
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// syncFile fsyncs an existing file by name.
func syncFile(name string) error {
	if !syncEnabled {
		return nil
	}
	return atomicfile.SyncFile(name)
}

// syncDir fsyncs a directory so that renames and creations in it are durable.
func syncDir(dir string) error {
	if !syncEnabled {
		return nil
	}
	return atomicfile.SyncDir(dir)
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func fileModeDefault() string {
	if runtime.GOOS == "windows" {
		return "false"
	}
	return "true"
}

// backoff returns the sleep before retry attempt i (quadratic with a cap),
// as git's hold_lock_file_for_update_timeout does.
func backoff(i int) time.Duration {
	d := time.Duration(i*i+1) * 5 * time.Millisecond
	if d > 200*time.Millisecond {
		d = 200 * time.Millisecond
	}
	return d
}

// gitLockTimeout bounds how long we wait for a git lock file (index.lock,
// <ref>.lock) held by somebody else before giving up.
var gitLockTimeout = 2 * time.Second

// markerDirName is the directory, inside the git dir, holding memctl's lock
// markers. See lockFile for the protocol.
const markerDirName = "memctl-locks"

// lockFile is one git-style lock (<target>.lock) held by us.
//
// Stale-lock protocol. git creates <target>.lock with O_CREAT|O_EXCL and
// never removes a stale one automatically, because it cannot know whether
// the owner is still running. We acquire the same lock atomically and just
// as exclusively, but via link(2): we first create a private marker file
// <gitdir>/memctl-locks/<name>, then hard-link it to <target>.lock (link
// fails with EEXIST exactly like O_EXCL). The lock file therefore has the
// same inode as our marker for its whole life. Only a memctl process holding
// memctl.lock ever creates markers, so when a later memctl process holds
// memctl.lock, every marker it finds belongs to a memctl process that died.
// If <target>.lock is still the same inode as such a marker (os.SameFile)
// the lock is provably ours and is removed; a lock created by a git process
// is always a different inode and is never touched. When the filesystem
// does not support hard links we fall back to plain O_EXCL and cannot clean
// up after a crash (like git).
type lockFile struct {
	target string // final file
	lock   string // target + ".lock"
	marker string // "" when the link fallback was used
	done   bool
}

// String returns the lock file's path.
func (l *lockFile) String() string { return l.lock }

// acquireLock takes <target>.lock, retrying with backoff for up to
// gitLockTimeout.
func acquireLock(gitDir, target, markerName string) (*lockFile, error) {
	l := &lockFile{target: target, lock: target + ".lock"}
	if err := os.MkdirAll(filepath.Dir(l.lock), 0o777); err != nil {
		return nil, err
	}
	mdir := filepath.Join(gitDir, markerDirName)
	if err := os.MkdirAll(mdir, 0o777); err != nil {
		return nil, err
	}
	marker := filepath.Join(mdir, markerName)
	_ = os.Remove(marker)
	mf, err := os.OpenFile(marker, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return nil, err
	}
	mf.Close()
	// The marker's creation precedes the link in the filesystem journal
	// (ext4, xfs, apfs order metadata operations), so a lock that survives
	// a power loss has its marker too; kill -9 needs no fsync at all.
	useLink := true
	deadline := time.Now().Add(gitLockTimeout)
	for i := 0; ; i++ {
		var err error
		if useLink {
			err = os.Link(marker, l.lock)
			if err != nil && !errors.Is(err, os.ErrExist) {
				// No hard links here: fall back to git's O_EXCL.
				useLink = false
				_ = os.Remove(marker)
				continue
			}
		} else {
			var f *os.File
			f, err = os.OpenFile(l.lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
			if err == nil {
				f.Close()
			}
		}
		if err == nil {
			if useLink {
				l.marker = marker
			}
			return l, nil
		}
		if !errors.Is(err, os.ErrExist) {
			_ = os.Remove(marker)
			return nil, fmt.Errorf("git: create %s: %w", l.lock, err)
		}
		if time.Now().After(deadline) {
			if useLink {
				_ = os.Remove(marker)
			}
			return nil, fmt.Errorf("git: unable to create %s: file exists; another git process seems to be running in this repository "+
				"(if none is, the lock file is stale and can be removed): %w", l.lock, ErrGitLocked)
		}
		time.Sleep(backoff(i))
	}
}

// write replaces the lock file's content and fsyncs it.
func (l *lockFile) write(data []byte) error {
	return writeFileSync(l.lock, data, 0o666)
}

// commit renames the lock over its target and makes that durable.
func (l *lockFile) commit() error {
	if err := os.Rename(l.lock, l.target); err != nil {
		return err
	}
	l.done = true
	if err := syncDir(filepath.Dir(l.target)); err != nil {
		return err
	}
	if l.marker != "" {
		_ = os.Remove(l.marker)
	}
	return nil
}

// release removes the lock if it was not committed.
func (l *lockFile) release() {
	if l == nil || l.done {
		return
	}
	l.done = true
	if l.marker != "" {
		if sameFile(l.marker, l.lock) {
			_ = os.Remove(l.lock)
		}
		_ = os.Remove(l.marker)
		return
	}
	_ = os.Remove(l.lock)
}

func sameFile(a, b string) bool {
	fa, err := os.Lstat(a)
	if err != nil {
		return false
	}
	fb, err := os.Lstat(b)
	if err != nil {
		return false
	}
	return os.SameFile(fa, fb)
}

// markerTarget maps a marker name to the lock file it guards.
func markerTarget(gitDir, name string) (string, bool) {
	if name == "index" {
		return filepath.Join(gitDir, "index.lock"), true
	}
	if ref, ok := cutPrefix(name, "ref~"); ok {
		ref = unescapeMarker(ref)
		if validRefPath(ref) {
			return filepath.Join(gitDir, filepath.FromSlash(ref)) + ".lock", true
		}
	}
	return "", false
}

func refMarker(ref string) string { return "ref~" + escapeMarker(ref) }

func escapeMarker(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '/':
			out = append(out, '~', 's')
		case '~':
			out = append(out, '~', 't')
		default:
			out = append(out, s[i])
		}
	}
	return string(out)
}

func unescapeMarker(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '~' && i+1 < len(s) {
			i++
			if s[i] == 's' {
				out = append(out, '/')
			} else {
				out = append(out, '~')
			}
			continue
		}
		out = append(out, s[i])
	}
	return string(out)
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return s, false
}

// staleMarkers lists markers left by a dead memctl process. Only meaningful
// while memctl.lock is held.
func staleMarkers(gitDir string) []string {
	ents, err := os.ReadDir(filepath.Join(gitDir, markerDirName))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// cleanupStaleLocks removes lock files provably left by a crashed memctl
// process (same inode as its marker) and the markers. The caller must hold
// memctl.lock. It returns descriptions of removed lock files.
func cleanupStaleLocks(gitDir string) []string {
	var fixed []string
	mdir := filepath.Join(gitDir, markerDirName)
	for _, name := range staleMarkers(gitDir) {
		marker := filepath.Join(mdir, name)
		if target, ok := markerTarget(gitDir, name); ok && sameFile(marker, target) {
			if err := os.Remove(target); err == nil {
				fixed = append(fixed, fmt.Sprintf("removed stale lock file %s left by an interrupted memctl commit", target))
				_ = syncDir(filepath.Dir(target))
			}
		}
		_ = os.Remove(marker)
	}
	return fixed
}
