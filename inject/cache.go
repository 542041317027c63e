package inject

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/memctl/memctl/mdmem"
)

// IndexCacheFile is the memory-relative path of the index cache: the
// parsed notes, the default ranker's index and the notes' token counts, so
// inject need not parse the Markdown, analyse text or load a tokenizer on
// every call. It is derived data in the git-ignored cache directory,
// rebuilt whenever any memory file changes.
//
// Layout: a 32-byte header (magic with the format version, payload length,
// CRC-32C of the payload), then the payload: the file key, topics, notes
// (length-prefixed strings, read in place without copying), the token
// count table, and the index as flat little-endian arrays aligned to 8
// bytes, viewed in place. The file is read in two reads (the head with
// the key, so a stale cache is rejected without reading the rest, then the
// rest); nothing is decoded twice. It is written streamed, never whole in
// memory. (The name is that of the gob cache of earlier versions,
// which the testscripts check for; its header is rejected and rebuilt.)
const IndexCacheFile = CacheDir + "/index.bin"

const (
	cacheMagic  = "memctl-index-v3\n"
	cacheHeader = 32 // magic (16), payload length (8), CRC-32C (4), zero (4)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// fileKey identifies one memory file's version: any write changes its
// size, mtime or ctime, and a replacement by rename changes its inode. A
// file written in the same second as the cache was built is "racy" (a
// later write in the same timestamp tick could leave all four unchanged),
// so its content hash is kept and checked too.
type fileKey struct {
	Path               string
	Size, Mtime, Ctime int64
	Ino                uint64
	Hash               []byte // SHA-256 of the content, racy files only
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

// sameKey compares the stat parts of two keys.
func sameKey(a, b []fileKey) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if x.Path != y.Path || x.Size != y.Size || x.Mtime != y.Mtime || x.Ctime != y.Ctime || x.Ino != y.Ino {
			return false
		}
	}
	return true
}

// racyWindow: files changed this close to the cache build (or after it)
// get a content hash in the key.
const racyWindow = 2 * time.Second

func hashFile(dir, rel string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	s := sha256.Sum256(data)
	return s[:], nil
}

// markRacy adds content hashes to the keys of files changed within
// racyWindow of now.
func markRacy(dir string, keys []fileKey, now time.Time) error {
	limit := now.Add(-racyWindow).UnixNano()
	for i := range keys {
		k := &keys[i]
		if k.Size >= 0 && (k.Mtime >= limit || k.Ctime >= limit) {
			h, err := hashFile(dir, k.Path)
			if err != nil {
				return err
			}
			k.Hash = h
		}
	}
	return nil
}

// ---- encoding ----

// cacheWriter streams the payload to w through a small buffer, keeping
// its length and CRC-32C for the header, so the cache is never held in
// memory whole.
type cacheWriter struct {
	w   io.Writer
	b   []byte
	n   int64 // payload bytes written to w
	crc uint32
	err error
}

const cacheChunk = 64 << 10

func (w *cacheWriter) flush() {
	if len(w.b) == 0 {
		return
	}
	w.crc = crc32.Update(w.crc, castagnoli, w.b)
	w.n += int64(len(w.b))
	if w.err == nil {
		_, w.err = w.w.Write(w.b)
	}
	w.b = w.b[:0]
}

func (w *cacheWriter) more() {
	if len(w.b) >= cacheChunk {
		w.flush()
	}
}

func (w *cacheWriter) uvarint(x uint64) { w.b = binary.AppendUvarint(w.b, x) }
func (w *cacheWriter) varint(x int64)   { w.b = binary.AppendVarint(w.b, x) }
func (w *cacheWriter) str(s string)     { w.uvarint(uint64(len(s))); w.b = append(w.b, s...); w.more() }
func (w *cacheWriter) strs(l []string) {
	w.uvarint(uint64(len(l)))
	for _, s := range l {
		w.str(s)
	}
}
func (w *cacheWriter) align() {
	for (w.n+int64(len(w.b))+cacheHeader)%8 != 0 {
		w.b = append(w.b, 0)
	}
}
func (w *cacheWriter) u16s(a []uint16) {
	w.uvarint(uint64(len(a)))
	w.align()
	for _, x := range a {
		w.b = binary.LittleEndian.AppendUint16(w.b, x)
		w.more()
	}
}
func (w *cacheWriter) i32s(a []int32) {
	w.uvarint(uint64(len(a)))
	w.align()
	for _, x := range a {
		w.b = binary.LittleEndian.AppendUint32(w.b, uint32(x))
		w.more()
	}
}
func (w *cacheWriter) bytes(a []byte) {
	w.uvarint(uint64(len(a)))
	for len(a) > 0 {
		k := min(len(a), cacheChunk)
		w.b = append(w.b, a[:k]...)
		a = a[k:]
		w.more()
	}
}

func (w *cacheWriter) time(t time.Time) {
	w.varint(t.Unix())
	w.uvarint(uint64(t.Nanosecond()))
}

// Note flags.
const (
	nfCreated = 1 << iota
	nfUpdated
	nfExpires
)

// encodeCache returns the whole cache file (for tests; saveCache streams).
func encodeCache(key []fileKey, c *Corpus, ix *Index) []byte {
	var buf bytes.Buffer
	buf.Write(make([]byte, cacheHeader))
	h, _ := writeCache(&buf, key, c, ix)
	out := buf.Bytes()
	copy(out, h[:])
	return out
}

// writeCache writes the payload to dst and returns the header that goes
// before it.
func writeCache(dst io.Writer, key []fileKey, c *Corpus, ix *Index) ([cacheHeader]byte, error) {
	w := &cacheWriter{w: dst, b: make([]byte, 0, cacheChunk+1024)}
	w.uvarint(uint64(len(key)))
	for _, k := range key {
		w.str(k.Path)
		w.varint(k.Size)
		w.varint(k.Mtime)
		w.varint(k.Ctime)
		w.uvarint(k.Ino)
		w.bytes(k.Hash)
	}
	w.uvarint(uint64(len(c.Topics)))
	for _, t := range c.Topics {
		w.str(t.Slug)
		w.str(t.Description)
		w.strs(t.Keywords)
	}
	w.uvarint(uint64(len(c.Notes)))
	for i := range c.Notes {
		n := &c.Notes[i]
		var fl byte
		if !n.Created.IsZero() {
			fl |= nfCreated
		}
		if !n.Updated.IsZero() {
			fl |= nfUpdated
		}
		if !n.Expires.IsZero() {
			fl |= nfExpires
		}
		w.b = append(w.b, fl)
		for _, s := range [...]string{n.ID, n.Category, n.Content, n.Source, n.SupersededBy, string(n.Place), n.File, n.Topic, n.Section} {
			w.str(s)
		}
		w.uvarint(uint64(n.Line))
		for _, l := range [...][]string{n.Scope, n.Refs, n.Tags, n.See, n.Notes} {
			w.strs(l)
		}
		if fl&nfCreated != 0 {
			w.time(n.Created)
		}
		if fl&nfUpdated != 0 {
			w.time(n.Updated)
		}
		if fl&nfExpires != 0 {
			w.time(n.Expires)
		}
		w.more()
	}
	// Token counts.
	t := c.tok
	if t == nil {
		w.str("")
	} else {
		w.str(t.name)
		names := make([]string, 0, len(t.consts))
		for s := range t.consts {
			names = append(names, s)
		}
		sort.Strings(names)
		w.uvarint(uint64(len(names)))
		for _, s := range names {
			w.str(s)
			w.uvarint(uint64(t.consts[s]))
		}
		w.bytes(t.digits)
		w.u16s(t.line)
		w.bytes(t.ref)
	}
	// Index.
	w.str(ix.An.key())
	w.uvarint(uint64(ix.N))
	for _, a := range ix.AvgLen {
		w.b = binary.LittleEndian.AppendUint64(w.b, math.Float64bits(a))
	}
	terms := make([]string, 0, len(ix.Terms))
	for s := range ix.Terms {
		terms = append(terms, s)
	}
	sort.Strings(terms)
	offs := make([]int32, len(terms)+1)
	ids := make([]int32, len(terms))
	var blobLen int32
	for i, s := range terms {
		blobLen += int32(len(s))
		offs[i+1] = blobLen
		ids[i] = ix.Terms[s]
	}
	w.i32s(offs)
	w.i32s(ids)
	w.uvarint(uint64(blobLen))
	for _, s := range terms {
		w.b = append(w.b, s...)
		w.more()
	}
	w.i32s(ix.PostStart)
	w.i32s(ix.PostDoc)
	for f := range ix.PostTF {
		w.u16s(ix.PostTF[f])
	}
	for f := range ix.DocLen {
		w.u16s(ix.DocLen[f])
	}
	w.flush()
	var h [cacheHeader]byte
	copy(h[:], cacheMagic)
	binary.LittleEndian.PutUint64(h[16:], uint64(w.n))
	binary.LittleEndian.PutUint32(h[24:], w.crc)
	return h, w.err
}

// ---- decoding ----

var errCorrupt = errors.New("index cache: corrupt")

// cacheReader reads the payload in place; strings and arrays alias the
// buffer, which is never written after it is read.
type cacheReader struct {
	b   []byte // the whole file
	p   int
	err error
}

func (r *cacheReader) fail() {
	if r.err == nil {
		r.err = errCorrupt
	}
	r.p = len(r.b)
}

func (r *cacheReader) uvarint() uint64 {
	x, n := binary.Uvarint(r.b[r.p:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.p += n
	return x
}

func (r *cacheReader) varint() int64 {
	x, n := binary.Varint(r.b[r.p:])
	if n <= 0 {
		r.fail()
		return 0
	}
	r.p += n
	return x
}

func (r *cacheReader) count(size int) int {
	n := r.uvarint()
	if n > uint64(len(r.b)-r.p)/uint64(size) {
		r.fail()
		return 0
	}
	return int(n)
}

func (r *cacheReader) raw(n int) []byte {
	if n < 0 || n > len(r.b)-r.p {
		r.fail()
		return nil
	}
	s := r.b[r.p : r.p+n : r.p+n]
	r.p += n
	return s
}

func (r *cacheReader) str() string {
	b := r.raw(r.count(1))
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

func (r *cacheReader) strs(pool *[]string) []string {
	n := r.count(1)
	if n == 0 {
		return nil
	}
	start := len(*pool)
	for i := 0; i < n; i++ {
		*pool = append(*pool, r.str())
	}
	return (*pool)[start:len(*pool):len(*pool)]
}

func (r *cacheReader) bytes() []byte { return r.raw(r.count(1)) }

func (r *cacheReader) align() {
	for r.p%8 != 0 && r.p < len(r.b) {
		r.p++
	}
}

var littleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

func (r *cacheReader) u16s() []uint16 {
	n := r.count(2)
	r.align()
	b := r.raw(2 * n)
	if n == 0 || r.err != nil {
		return make([]uint16, n)
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%2 == 0 {
		return unsafe.Slice((*uint16)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]uint16, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return out
}

func (r *cacheReader) i32s() []int32 {
	n := r.count(4)
	r.align()
	b := r.raw(4 * n)
	if n == 0 || r.err != nil {
		return make([]int32, n)
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*int32)(unsafe.Pointer(&b[0])), n)
	}
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func (r *cacheReader) time() time.Time {
	sec := r.varint()
	nsec := r.uvarint()
	if nsec >= 1e9 {
		r.fail()
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// keyPeek is how much of the cache is read first: enough for the key of
// a few hundred memory files. A stale cache (the usual reason to rebuild)
// is rejected on its key without reading and checksumming the rest.
const keyPeek = 32 << 10

// readCacheFile reads the cache and checks its header and checksum. If
// the file's key, read first, does not match key (stat parts only), it
// returns (nil, nil) without reading the rest.
func readCacheFile(dir string, key []fileKey) (*cacheReader, error) {
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(IndexCacheFile)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	size := fi.Size()
	head := make([]byte, min(size, cacheHeader+keyPeek))
	if _, err := io.ReadFull(f, head); err != nil {
		return nil, err
	}
	if len(head) < cacheHeader || string(head[:len(cacheMagic)]) != cacheMagic {
		return nil, errors.New("index cache: bad header")
	}
	n := binary.LittleEndian.Uint64(head[16:])
	if n != uint64(size-cacheHeader) {
		return nil, errors.New("index cache: wrong length (truncated)")
	}
	if r := (&cacheReader{b: head, p: cacheHeader}); !r.sameKey(key) && (r.err == nil || int64(len(head)) == size) {
		return nil, r.err // stale (or, if all was read, corrupt)
	}
	data := head
	if int64(len(head)) < size {
		// Read it all again rather than copy head in: make followed by
		// copy compiles to one call that zeroes the whole buffer at
		// once, unpreemptibly (400 ms at 42 MB here, the GC waiting).
		data = make([]byte, size)
		if _, err := f.ReadAt(data, 0); err != nil {
			return nil, err
		}
	}
	if crc32.Checksum(data[cacheHeader:], castagnoli) != binary.LittleEndian.Uint32(data[24:]) {
		return nil, errors.New("index cache: checksum mismatch (corrupt)")
	}
	return &cacheReader{b: data, p: cacheHeader}, nil
}

// sameKey reads the cache's key and compares its stat parts with key.
func (r *cacheReader) sameKey(key []fileKey) bool {
	nk := r.count(1)
	if nk != len(key) {
		return false
	}
	for i := 0; i < nk; i++ {
		k := fileKey{Path: r.str(), Size: r.varint(), Mtime: r.varint(), Ctime: r.varint(), Ino: r.uvarint(), Hash: r.bytes()}
		if r.err != nil || !sameKey([]fileKey{k}, key[i:i+1]) {
			return false
		}
	}
	return true
}

// loadCached returns the cached corpus if the cache is intact (magic,
// length and checksum) and its key matches the files on disk; else nil.
func loadCached(ctx context.Context, dir string) (*Corpus, error) {
	key, err := memoryKey(dir)
	if err != nil {
		return nil, err
	}
	r, err := readCacheFile(dir, key)
	if err != nil || r == nil {
		return nil, err
	}
	nk := r.count(1)
	if nk != len(key) {
		return nil, r.err
	}
	for i := 0; i < nk; i++ {
		k := fileKey{Path: r.str(), Size: r.varint(), Mtime: r.varint(), Ctime: r.varint(), Ino: r.uvarint(), Hash: r.bytes()}
		if r.err != nil || !sameKey([]fileKey{k}, key[i:i+1]) {
			return nil, r.err
		}
		if len(k.Hash) > 0 {
			h, err := hashFile(dir, k.Path)
			if err != nil || string(h) != string(k.Hash) {
				return nil, err
			}
		}
	}
	c := decodeCorpus(r)
	if r.err != nil {
		return nil, r.err
	}
	return c, ctx.Err()
}

func decodeCorpus(r *cacheReader) *Corpus {
	c := &Corpus{}
	nt := r.count(1)
	c.Topics = make([]TopicInfo, nt)
	var pool []string
	for i := range c.Topics {
		c.Topics[i] = TopicInfo{Slug: r.str(), Description: r.str(), Keywords: r.strs(&pool)}
	}
	nn := r.count(1)
	c.Notes = make([]Note, nn)
	pool = make([]string, 0, 2*nn)
	for i := range c.Notes {
		if r.err != nil {
			return nil
		}
		n := &c.Notes[i]
		fl := r.raw(1)
		if len(fl) == 0 {
			return nil
		}
		n.ID, n.Category, n.Content, n.Source, n.SupersededBy = r.str(), r.str(), r.str(), r.str(), r.str()
		n.Place, n.File, n.Topic, n.Section = mdmem.Place(r.str()), r.str(), r.str(), r.str()
		n.Line = int(r.uvarint())
		n.Scope, n.Refs, n.Tags, n.See, n.Notes = r.strs(&pool), r.strs(&pool), r.strs(&pool), r.strs(&pool), r.strs(&pool)
		if fl[0]&nfCreated != 0 {
			n.Created = r.time()
		}
		if fl[0]&nfUpdated != 0 {
			n.Updated = r.time()
		}
		if fl[0]&nfExpires != 0 {
			n.Expires = r.time()
		}
	}
	if name := r.str(); name != "" {
		t := &tokTable{name: name, consts: map[string]int{}}
		for k := r.count(1); k > 0; k-- {
			s := r.str()
			t.consts[s] = int(r.uvarint())
		}
		t.digits = r.bytes()
		t.line = r.u16s()
		t.ref = r.bytes()
		if len(t.digits) != digitTableLen || len(t.line) != nn || len(t.ref) != nn {
			r.fail()
			return nil
		}
		c.tok = t
	}
	ix := &Index{}
	an := r.str()
	for _, rp := range Rankers {
		if rp.An.key() == an {
			ix.An = rp.An
		}
	}
	ix.N = int(r.uvarint())
	for f := range ix.AvgLen {
		ix.AvgLen[f] = math.Float64frombits(binary.LittleEndian.Uint64(r.raw(8)))
	}
	ix.termOff = r.i32s()
	ix.termID = r.i32s()
	ix.termBlob = r.bytes()
	ix.PostStart = r.i32s()
	ix.PostDoc = r.i32s()
	for f := range ix.PostTF {
		ix.PostTF[f] = r.u16s()
	}
	for f := range ix.DocLen {
		ix.DocLen[f] = r.u16s()
	}
	if r.err != nil || !ix.valid(nn) || an != ix.An.key() {
		r.fail()
		return nil
	}
	c.init()
	c.indexes[an] = ix
	return c
}

// valid checks the index arrays against each other, so a cache that
// passed the checksum but was written wrong cannot index out of range.
func (ix *Index) valid(nDocs int) bool {
	nt := len(ix.termID)
	if ix.N != nDocs || len(ix.termOff) != nt+1 || len(ix.PostStart) != nt+1 || int(ix.termOff[nt]) != len(ix.termBlob) {
		return false
	}
	for i := 0; i < nt; i++ {
		if ix.termOff[i] > ix.termOff[i+1] || ix.termID[i] < 0 || int(ix.termID[i]) >= nt ||
			ix.PostStart[i] > ix.PostStart[i+1] {
			return false
		}
	}
	np := len(ix.PostDoc)
	if ix.PostStart[0] != 0 || int(ix.PostStart[nt]) != np {
		return false
	}
	for f := range ix.PostTF {
		if len(ix.PostTF[f]) != np || len(ix.DocLen[f]) != nDocs {
			return false
		}
	}
	for _, d := range ix.PostDoc {
		if d < 0 || int(d) >= nDocs {
			return false
		}
	}
	return true
}

// saveCache writes the cache atomically (temp file, fsync, rename), and
// only if the memory files did not change while they were read. before is
// the key taken (with markRacy) before the files were read. The payload is
// streamed to the temp file and the header (length, checksum) written
// last, at offset 0, before the fsync.
func saveCache(ctx context.Context, dir string, c *Corpus, before []fileKey) {
	after, err := memoryKey(dir)
	if err != nil || !sameKey(before, after) {
		return
	}
	ix := c.Index(Rankers[DefaultRanker].An)
	if _, err := mdmem.SafeDir(dir, CacheDir); err != nil {
		return // a derived cache: never written through a link, inject goes on without it
	}
	p := filepath.Join(dir, filepath.FromSlash(IndexCacheFile))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return
	}
	_ = mdmem.WriteFileAtomicFunc(ctx, p, mdmem.PrivateFileMode, func(f *os.File) error {
		var zero [cacheHeader]byte
		if _, err := f.Write(zero[:]); err != nil {
			return err
		}
		h, err := writeCache(f, before, c, ix)
		if err != nil {
			return err
		}
		_, err = f.WriteAt(h[:], 0)
		return err
	})
}
