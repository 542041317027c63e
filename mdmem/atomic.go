package mdmem

import (
	"context"
	"os"

	"github.com/memctl/memctl/mdmem/atomicfile"
)

// PrivateFileMode is the mode of the files memctl creates in a memory
// (memory files, queue, caches, journals): the person's own, readable by
// no one else. A file that already exists keeps its mode when memctl
// replaces it (see ModeOf).
const PrivateFileMode os.FileMode = 0o600

// ModeOf returns the permission bits of path, or PrivateFileMode when it
// does not exist (or cannot be read).
func ModeOf(path string) os.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return PrivateFileMode
}

// WriteFileAtomic replaces path with data: a temp file in the same
// directory, fsync, rename, fsync of the directory (package atomicfile). A
// reader sees the old or the new content, never a mix; a crash leaves at
// most a stray temp file.
func WriteFileAtomic(ctx context.Context, path string, data []byte, perm os.FileMode) error {
	return atomicfile.WriteFile(ctx, path, data, perm)
}

// WriteFileAtomicFunc is WriteFileAtomic for content that fill streams into
// the temp file (which fill may also seek in).
func WriteFileAtomicFunc(ctx context.Context, path string, perm os.FileMode, fill func(*os.File) error) error {
	return atomicfile.WriteFunc(ctx, path, perm, fill)
}

// SyncDir fsyncs a directory so that renames and creations in it are
// durable.
func SyncDir(dir string) error { return atomicfile.SyncDir(dir) }
