package inject

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/memctl/memctl/mdmem"
)

// IndexCacheFile is the memory-relative path of the index cache: the
// parsed notes and the default ranker's index, so inject need not parse
// the Markdown or analyse text on every call. It is derived data in the
// git-ignored cache directory, rebuilt whenever any memory file changes.
const IndexCacheFile = CacheDir + "/index.gob"

const cacheMagic = "memctl-index-v1\n"

// fileKey identifies one memory file's version: any write changes its
// size, mtime or ctime, and a replacement by rename changes its inode.
type fileKey struct {
	Path               string
	Size, Mtime, Ctime int64
	Ino                uint64
}

type cacheData struct {
	Key    []fileKey
	Notes  []Note
	Topics []TopicInfo
	Index  *Index
}

// memoryKey stats MEMORY.md and topics/*.md.
func memoryKey(dir string) ([]fileKey, error) {
	paths := []string{mdmem.MainFile}
	ents, err := os.ReadDir(filepath.Join(dir, mdmem.TopicDir))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	for _, de := range ents {
		if n := de.Name(); strings.HasSuffix(n, ".md") && !strings.HasPrefix(n, ".") {
			paths = append(paths, mdmem.TopicDir+"/"+n)
		}
	}
	sort.Strings(paths)
	keys := make([]fileKey, 0, len(paths))
	for _, p := range paths {
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p)))
		if errors.Is(err, os.ErrNotExist) {
			keys = append(keys, fileKey{Path: p, Size: -1})
			continue
		}
		if err != nil {
			return nil, err
		}
		k := fileKey{Path: p, Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			k.Ino = st.Ino
			k.Ctime = st.Ctim.Sec*1e9 + st.Ctim.Nsec
		}
		keys = append(keys, k)
	}
	return keys, nil
}

func sameKey(a, b []fileKey) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// loadCached returns the cached corpus if the cache is intact (magic and
// checksum) and its key matches the files on disk; else nil.
func loadCached(ctx context.Context, dir string) (*Corpus, error) {
	key, err := memoryKey(dir)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(IndexCacheFile)))
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(data, []byte(cacheMagic)) || len(data) < len(cacheMagic)+sha256.Size {
		return nil, errors.New("index cache: bad header")
	}
	sum := data[len(cacheMagic) : len(cacheMagic)+sha256.Size]
	payload := data[len(cacheMagic)+sha256.Size:]
	if got := sha256.Sum256(payload); !bytes.Equal(got[:], sum) {
		return nil, errors.New("index cache: checksum mismatch (truncated or corrupt)")
	}
	var cd cacheData
	if err := gob.NewDecoder(bytes.NewReader(payload)).Decode(&cd); err != nil {
		return nil, err
	}
	if !sameKey(cd.Key, key) {
		return nil, nil
	}
	c := &Corpus{Notes: cd.Notes, Topics: cd.Topics}
	c.init()
	if cd.Index != nil {
		c.indexes[cd.Index.An.key()] = cd.Index
	}
	return c, ctx.Err()
}

// saveCache writes the cache atomically (temp file, fsync, rename), and
// only if the memory files did not change while they were read.
func saveCache(ctx context.Context, dir string, c *Corpus, before []fileKey) {
	after, err := memoryKey(dir)
	if err != nil || !sameKey(before, after) {
		return
	}
	cd := cacheData{Key: after, Notes: c.Notes, Topics: c.Topics, Index: c.Index(Rankers[DefaultRanker].An)}
	var payload bytes.Buffer
	if err := gob.NewEncoder(&payload).Encode(&cd); err != nil {
		return
	}
	sum := sha256.Sum256(payload.Bytes())
	out := make([]byte, 0, len(cacheMagic)+len(sum)+payload.Len())
	out = append(append(append(out, cacheMagic...), sum[:]...), payload.Bytes()...)
	p := filepath.Join(dir, filepath.FromSlash(IndexCacheFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	_ = mdmem.WriteFileAtomic(ctx, p, out, 0o644)
}
