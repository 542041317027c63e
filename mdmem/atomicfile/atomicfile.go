// Package atomicfile replaces files so that a reader, or a crash, sees the
// old content or the new, never a mix: a temp file in the same directory,
// fsync, rename, fsync of the directory. It is memctl's one implementation
// of that, used by mdmem and its git layer alike.
package atomicfile

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
)

// WriteFile replaces path with data, with permission bits perm. A crash
// leaves at most a stray ".<name>.tmp-*" file beside it.
func WriteFile(ctx context.Context, path string, data []byte, perm os.FileMode) error {
	return WriteFunc(ctx, path, perm, func(f *os.File) error {
		_, err := f.Write(data)
		return err
	})
}

// WriteFunc is WriteFile for content that fill streams into the temp file
// (which fill may also seek in).
func WriteFunc(ctx context.Context, path string, perm os.FileMode, fill func(*os.File) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmp)
		}
	}()
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	renamed = true
	return SyncDir(dir)
}

// SyncDir fsyncs a directory so that renames and creations in it are
// durable (a no-op on Windows, where directories cannot be opened).
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	return SyncFile(dir)
}

// SyncFile fsyncs an existing file (or directory) by name.
func SyncFile(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
