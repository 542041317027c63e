package gitstore

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// objStore reads objects through go-git (loose and packed, alternates) and
// writes loose objects itself, durably.
type objStore struct {
	gitDir string
	st     *filesystem.Storage
	// mu guards st (go-git's storage is not safe for concurrent use),
	// dirty and files: write may run on several goroutines (Prepare
	// writes a commit's blobs on every core) while read and has run.
	mu    sync.Mutex
	dirty map[string]bool // object directories to fsync
	files []string        // written objects not yet fsynced
}

// newObjStore opens a fresh go-git storage; a fresh one per operation so
// packs written by `git gc` in between are seen.
func (r *Repo) newObjStore() *objStore {
	st := filesystem.NewStorageWithOptions(osfs.New(r.gitDir), cache.NewObjectLRU(4*cache.MiByte),
		filesystem.Options{AlternatesFS: osfs.New("/")})
	return &objStore{gitDir: r.gitDir, st: st, dirty: map[string]bool{}}
}

func (o *objStore) close() { _ = o.st.Close() }

// read returns an object's type and content.
func (o *objStore) read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	if typ, b, err := o.readLoose(h); err == nil {
		return typ, b, nil
	}
	// Packed (or a loose file this reader does not take): go-git.
	o.mu.Lock()
	defer o.mu.Unlock()
	obj, err := o.st.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return 0, nil, fmt.Errorf("git: read object %s: %w", h, err)
	}
	rd, err := obj.Reader()
	if err != nil {
		return 0, nil, err
	}
	defer rd.Close()
	b, err := readExactly(rd, obj.Size())
	if err != nil {
		return 0, nil, fmt.Errorf("git: read object %s: %w", h, err)
	}
	return obj.Type(), b, nil
}

// readLoose reads a loose object into one buffer of its size (go-git
// copies it through growing buffers, several times its size for the
// files of a large import). An error (no such file among them) sends
// the caller to go-git.
func (o *objStore) readLoose(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	f, err := os.Open(o.loosePath(h))
	if err != nil {
		return 0, nil, err
	}
	defer f.Close()
	zr, err := zlib.NewReader(bufio.NewReader(f))
	if err != nil {
		return 0, nil, err
	}
	defer zr.Close()
	br := bufio.NewReader(zr)
	head, err := br.ReadString(0)
	if err != nil || len(head) > 32 {
		return 0, nil, errors.New("bad loose object header")
	}
	name, size, ok := strings.Cut(head[:len(head)-1], " ")
	typ, terr := plumbing.ParseObjectType(name)
	n, nerr := strconv.ParseInt(size, 10, 64)
	if !ok || terr != nil || nerr != nil || n < 0 || n > maxObjectBytes {
		return 0, nil, errors.New("bad loose object header")
	}
	b, err := readExactly(br, n)
	if err != nil {
		return 0, nil, err
	}
	return typ, b, nil
}

// maxObjectBytes bounds the size a loose object's header may claim
// before a buffer of that size is made.
const maxObjectBytes = 1 << 31

// readExactly reads n bytes from r, which must end there (a zlib stream
// checks its checksum at its end).
func readExactly(r io.Reader, n int64) ([]byte, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, err
	}
	var one [1]byte
	if m, err := io.ReadFull(r, one[:]); m != 0 || err != io.EOF {
		if err == nil || err == io.ErrUnexpectedEOF {
			err = errors.New("object longer than its header says")
		}
		return nil, err
	}
	return b, nil
}

func (o *objStore) has(h plumbing.Hash) bool {
	if _, err := os.Stat(o.loosePath(h)); err == nil {
		return true
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.st.HasEncodedObject(h) == nil
}

func (o *objStore) loosePath(h plumbing.Hash) string {
	s := h.String()
	return filepath.Join(o.gitDir, "objects", s[:2], s[2:])
}

func hashObject(typ string, content []byte) plumbing.Hash {
	hh := sha1.New()
	hh.Write([]byte(typ + " " + strconv.Itoa(len(content)) + "\x00"))
	hh.Write(content)
	var h plumbing.Hash
	copy(h[:], hh.Sum(nil))
	return h
}

// write stores a loose object unless it exists. The file and its directory
// are fsynced by syncDirs, batched: on journaling filesystems the first
// fsync commits the others' data too, which makes the rest cheap. Calls
// may run on several goroutines: the hashing and compressing overlap,
// the look-ups in the store and the bookkeeping do not.
func (o *objStore) write(typ string, content []byte) (plumbing.Hash, error) {
	h := hashObject(typ, content)
	if o.has(h) {
		return h, nil
	}
	final := o.loosePath(h)
	dir := filepath.Dir(final)
	o.mu.Lock()
	_, err := os.Stat(dir)
	if err != nil {
		if err = os.MkdirAll(dir, 0o777); err == nil {
			o.dirty[filepath.Dir(dir)] = true
		}
	}
	o.mu.Unlock()
	if err != nil {
		return h, err
	}
	// git's fsck tolerates leftover files named tmp_obj_* after a crash.
	f, err := os.CreateTemp(dir, "tmp_obj_memctl_")
	if err != nil {
		return h, err
	}
	tmp := f.Name()
	zw := zlib.NewWriter(f)
	_, err = zw.Write([]byte(typ + " " + strconv.Itoa(len(content)) + "\x00"))
	if err == nil {
		_, err = zw.Write(content)
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		_ = os.Chmod(tmp, 0o444)
		err = os.Rename(tmp, final)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return h, fmt.Errorf("git: write object %s: %w", h, err)
	}
	o.mu.Lock()
	o.dirty[dir] = true
	o.files = append(o.files, final)
	o.mu.Unlock()
	return h, nil
}

// syncDirs makes all written objects and their renames durable.
func (o *objStore) syncDirs() error {
	for _, f := range o.files {
		if err := syncFile(f); err != nil {
			return err
		}
	}
	o.files = nil
	dirs := make([]string, 0, len(o.dirty))
	for d := range o.dirty {
		dirs = append(dirs, d)
	}
	// deeper directories first, then objects/ itself
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	for _, d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	o.dirty = map[string]bool{}
	return nil
}

// treeEntry is one raw tree entry; the mode is kept as written so that
// unchanged entries are re-serialised byte for byte.
type treeEntry struct {
	mode string
	name string
	hash plumbing.Hash
}

func (e treeEntry) isTree() bool { return e.mode == "40000" }

const (
	modeTree   = "40000"
	modeBlob   = "100644"
	modeExec   = "100755"
	modeLink   = "120000"
	modeGitlnk = "160000"
)

func parseTree(b []byte) ([]treeEntry, error) {
	var out []treeEntry
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		if sp < 0 {
			return nil, errors.New("git: corrupt tree object")
		}
		nul := bytes.IndexByte(b[sp:], 0)
		if nul < 0 || sp+nul+21 > len(b) {
			return nil, errors.New("git: corrupt tree object")
		}
		nul += sp
		var e treeEntry
		e.mode = string(b[:sp])
		e.name = string(b[sp+1 : nul])
		copy(e.hash[:], b[nul+1:nul+21])
		out = append(out, e)
		b = b[nul+21:]
	}
	return out, nil
}

// treeLess is git's tree order: names compared as if directories had a
// trailing slash.
func treeLess(a, b treeEntry) bool {
	an, bn := a.name, b.name
	if a.isTree() {
		an += "/"
	}
	if b.isTree() {
		bn += "/"
	}
	return an < bn
}

func encodeTree(ents []treeEntry) []byte {
	sort.SliceStable(ents, func(i, j int) bool { return treeLess(ents[i], ents[j]) })
	var buf bytes.Buffer
	for _, e := range ents {
		buf.WriteString(e.mode)
		buf.WriteByte(' ')
		buf.WriteString(e.name)
		buf.WriteByte(0)
		buf.Write(e.hash[:])
	}
	return buf.Bytes()
}

func (o *objStore) readTree(h plumbing.Hash) ([]treeEntry, error) {
	if h.IsZero() {
		return nil, nil
	}
	typ, b, err := o.read(h)
	if err != nil {
		return nil, err
	}
	if typ != plumbing.TreeObject {
		return nil, fmt.Errorf("git: object %s is a %s, not a tree", h, typ)
	}
	return parseTree(b)
}

// peel follows annotated tags from h to the object they name; an object
// that cannot be read ends the chain.
func (o *objStore) peel(h plumbing.Hash) plumbing.Hash {
	for {
		typ, raw, err := o.read(h)
		if err != nil || typ != plumbing.TagObject {
			return h
		}
		obj, _, _ := bytes.Cut(raw, []byte("\n"))
		h = plumbing.NewHash(strings.TrimPrefix(string(obj), "object "))
	}
}

// treePath is the path of entry name in directory dir ("" for the root).
func treePath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// walkTree walks tree h, at path dir, depth first in tree order. enter is
// asked about every tree, the root included, before it is read (false
// skips it); file is called with the path of every entry that is not a
// tree.
func (o *objStore) walkTree(h plumbing.Hash, dir string, enter func(h plumbing.Hash, dir string) (bool, error), file func(p string, e treeEntry) error) error {
	if ok, err := enter(h, dir); !ok || err != nil {
		return err
	}
	ents, err := o.readTree(h)
	if err != nil {
		return err
	}
	for _, e := range ents {
		p := treePath(dir, e.name)
		if e.isTree() {
			err = o.walkTree(e.hash, p, enter, file)
		} else {
			err = file(p, e)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// lookup finds the entry for a slash path under tree root.
func (o *objStore) lookup(root plumbing.Hash, p string) (treeEntry, bool, error) {
	cur := root
	parts := strings.Split(p, "/")
	for i, name := range parts {
		ents, err := o.readTree(cur)
		if err != nil {
			return treeEntry{}, false, err
		}
		var found *treeEntry
		for k := range ents {
			if ents[k].name == name {
				found = &ents[k]
				break
			}
		}
		if found == nil {
			return treeEntry{}, false, nil
		}
		if i == len(parts)-1 {
			return *found, true, nil
		}
		if !found.isTree() {
			return treeEntry{}, false, nil
		}
		cur = found.hash
	}
	return treeEntry{}, false, nil
}

// change is the new state of one tree path; del removes it.
type change struct {
	del  bool
	mode string
	hash plumbing.Hash
}

// updateTree applies changes (keyed by slash paths relative to this tree)
// to the tree h (zero = empty) and returns the new tree hash, writing only
// the trees that changed. empty reports a tree without entries.
func (o *objStore) updateTree(h plumbing.Hash, changes map[string]change) (plumbing.Hash, bool, error) {
	ents, err := o.readTree(h)
	if err != nil {
		return h, false, err
	}
	leaf := map[string]change{}
	sub := map[string]map[string]change{}
	for p, c := range changes {
		first, rest, found := strings.Cut(p, "/")
		if !found {
			leaf[first] = c
			continue
		}
		if sub[first] == nil {
			sub[first] = map[string]change{}
		}
		sub[first][rest] = c
	}
	for name := range leaf {
		if _, ok := sub[name]; ok {
			return h, false, fmt.Errorf("git: path %q is used both as a file and as a directory", name)
		}
	}
	idx := map[string]int{}
	for i, e := range ents {
		idx[e.name] = i
	}
	removed := map[string]bool{}
	set := func(e treeEntry) {
		if i, ok := idx[e.name]; ok {
			ents[i] = e
			delete(removed, e.name)
			return
		}
		idx[e.name] = len(ents)
		ents = append(ents, e)
	}
	for name, c := range leaf {
		if c.del {
			if i, ok := idx[name]; ok && !ents[i].isTree() {
				removed[name] = true
			}
			continue
		}
		set(treeEntry{mode: c.mode, name: name, hash: c.hash})
	}
	for name, ch := range sub {
		var old plumbing.Hash
		if i, ok := idx[name]; ok && ents[i].isTree() {
			old = ents[i].hash
		} else if ok {
			// a file is being replaced by a directory only if something is added
			allDel := true
			for _, c := range ch {
				if !c.del {
					allDel = false
				}
			}
			if allDel {
				continue
			}
		}
		nh, empty, err := o.updateTree(old, ch)
		if err != nil {
			return h, false, err
		}
		if empty {
			if _, ok := idx[name]; ok && (old != plumbing.ZeroHash) {
				removed[name] = true
			}
			continue
		}
		set(treeEntry{mode: modeTree, name: name, hash: nh})
	}
	out := ents[:0:0]
	for _, e := range ents {
		if !removed[e.name] {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return plumbing.ZeroHash, true, nil
	}
	nh, err := o.write("tree", encodeTree(out))
	return nh, false, err
}
