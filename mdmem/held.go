package mdmem

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// HoldQueueFile moves a candidate's queue file into HeldQueueDir: first
// the reason (atomic write), then the queue file itself (one rename, so a
// crash leaves it either queued or held, never both nor lost). A queue
// file already gone is not an error.
func HoldQueueFile(ctx context.Context, dir, id, reason string) error {
	if strings.ContainsAny(id, `/\`) || id == "" || strings.HasPrefix(id, ".") {
		return fmt.Errorf("invalid candidate id %q", id)
	}
	if err := EnsureDir(dir, HeldQueueDir); err != nil {
		return err
	}
	qd := filepath.Join(dir, filepath.FromSlash(QueueDir))
	hd := filepath.Join(dir, filepath.FromSlash(HeldQueueDir))
	if err := privateDir(hd); err != nil {
		return err
	}
	if err := WriteFileAtomic(ctx, filepath.Join(hd, id+".reason"), []byte(reason), 0o600); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(qd, id+".json"), filepath.Join(hd, id+".json")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := SyncDir(hd); err != nil {
		return err
	}
	return SyncDir(qd)
}

// ReadCacheFile reads .memctl/cache/<name> (nil, nil when absent).
func ReadCacheFile(dir, name string) ([]byte, error) {
	if err := checkCacheName(name); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(CacheDir), name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return b, err
}

// WriteCacheFile replaces .memctl/cache/<name> atomically (nil data
// removes it). A cache directory that is a symlink is refused.
func WriteCacheFile(ctx context.Context, dir, name string, data []byte) error {
	if err := checkCacheName(name); err != nil {
		return err
	}
	p := filepath.Join(dir, filepath.FromSlash(CacheDir), name)
	if data == nil {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := EnsureDir(dir, CacheDir); err != nil {
		return err
	}
	return WriteFileAtomic(ctx, p, data, PrivateFileMode)
}

func checkCacheName(name string) error {
	if name == "" || strings.ContainsAny(name, `/\`) || strings.HasPrefix(name, ".") {
		return fmt.Errorf("invalid cache file name %q", name)
	}
	return nil
}
