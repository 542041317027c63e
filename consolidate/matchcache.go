package consolidate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/memctl/memctl/mdmem"
	"github.com/memctl/memctl/mdmem/osfile"
)

// MatchCacheDir holds the matcher's cache: one segment per topic file with
// what the rules' lookups need of its entries (exact-text hashes, shingle
// postings, where each entry is in its file and a fingerprint of it, ids,
// the largest id number per prefix, live entries per category and scope),
// so that a run with candidates parses only MEMORY.md and the files it
// writes, and reads the entries its lookups return alone
// (docs/CONSOLIDATE.md, What a run reads).
const MatchCacheDir = ".memctl/cache/match"

const (
	segMagic   = "MCMATCH3"
	segHeader  = 128
	racyWindow = 2 * time.Second
)

// segKey is what a segment records of its file: a stat key, and the
// content's SHA-256 for a file changed within racyWindow of the build.
type segKey struct {
	Size, Mtime, Ctime int64
	Ino                uint64
	Built              int64
	Hash               [32]byte
}

// statKey reads the stat part of a file's key; ok is false for anything
// but a regular file.
func statKey(p string) (k segKey, ok bool) {
	fi, err := os.Lstat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return k, false
	}
	k.Size, k.Mtime = fi.Size(), fi.ModTime().UnixNano()
	k.Ino, k.Ctime = osfile.InodeAndCtime(fi)
	return k, true
}

// segment is one topic file's part of the match cache, read from its
// file (pread) a block at a time as the lookups need it: a mapping of the
// file would cost the run most of the file (the kernel maps the pages
// around each one touched), where the lookups read a few hundred entries.
type segment struct {
	slug string
	rank int // the file's place in Memory.Docs order (MEMORY.md is 0)
	f    *os.File
	size int
	head []byte // the header
	// blocks are the blockSize blocks of the file read so far (last is
	// the one read last); post is scratch for a posting list read whole.
	blocks  map[int][]byte
	lastBlk int
	last    []byte
	post    []byte
	// err is the first read that failed: the plan is refused
	// (errMatchCache) and the run plans on the whole memory.
	err error
	// counts of the sections
	nEntries, nItems, nIDs, nHashes, nPost, nStr, nMax, nLive, nNorms          int
	items, sizes, ids, norms, hashes, offs, posts, maxes, lives, strOffs, strs int // offsets
	base                                                                       int // first index of its items in the base counters
	// minSize is the fewest shingles an item with words holds (the
	// lookup's bound on what an item it has not met can score).
	minSize int
}

// blockSize is how much of a segment one read brings in.
const blockSize = 4096

const (
	// normHash u64, nsh u32, entry u32, cat u32, scope u32, place u32,
	// start u32, end u32, line u32, section u32 (noLight: the entry is
	// read with its file), pad u32, fingerprint [16]byte
	itemSize = 64
	idSize   = 16 // idHash u64, string u32, item i32
	normSize = 16 // normHash u64, item u32, pad
	liveSize = 16 // cat u32, scope u32, place u32, count u32
	noLight  = ^uint32(0)
)

func le64(b []byte, o int) uint64 { return binary.LittleEndian.Uint64(b[o:]) }
func le32(b []byte, o int) uint32 { return binary.LittleEndian.Uint32(b[o:]) }

func hashString(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// buildSegment encodes the match segment of a parsed topic file whose
// content has key k.
func buildSegment(d *mdmem.Doc, k segKey) []byte {
	var strs []string
	strIdx := map[string]uint32{}
	str := func(s string) uint32 {
		if i, ok := strIdx[s]; ok {
			return i
		}
		strIdx[s] = uint32(len(strs))
		strs = append(strs, s)
		return strIdx[s]
	}
	type rec struct {
		norm                   uint64
		nsh, entry             uint32
		cat, scope, place      uint32
		start, end, line, sect uint32
		fp                     [16]byte
	}
	type idRec struct {
		h    uint64
		s    uint32
		item int32
	}
	type normRec struct {
		h    uint64
		item uint32
	}
	var items []rec
	var ids []idRec
	var norms []normRec
	post := map[uint64][]uint32{}
	maxes := map[string]int{}
	lives := map[[3]uint32]int{}
	minSize := 0
	for ei, e := range d.Entries {
		if e.ID == "" {
			continue
		}
		if p, n, ok := mdmem.SplitID(e.ID); ok && n > maxes[p] {
			maxes[p] = n
		}
		item := int32(-1)
		if e.Place != mdmem.PlaceOther {
			it := newItem(e.Content, e.Category, e.Scope)
			item = int32(len(items))
			r := rec{norm: hashString(it.norm), nsh: uint32(len(it.sh)), entry: uint32(ei),
				cat: str(it.cat), scope: str(it.scope), place: str(string(e.Place)), sect: noLight, fp: entryFingerprint(e)}
			if lightEntry(d, e) {
				r.start, r.end, r.line, r.sect = uint32(e.Start), uint32(e.End), uint32(e.Line), str(e.Section)
			}
			items = append(items, r)
			lives[[3]uint32{r.cat, r.scope, r.place}]++
			if it.norm != "" {
				norms = append(norms, normRec{hashString(it.norm), uint32(item)})
				for _, h := range it.sh {
					post[h] = append(post[h], uint32(item))
				}
				if minSize == 0 || len(it.sh) < minSize {
					minSize = len(it.sh)
				}
			}
		}
		ids = append(ids, idRec{hashString(e.ID), str(e.ID), item})
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i].h < ids[j].h || ids[i].h == ids[j].h && ids[i].s < ids[j].s })
	sort.Slice(norms, func(i, j int) bool {
		return norms[i].h < norms[j].h || norms[i].h == norms[j].h && norms[i].item < norms[j].item
	})
	hashes := make([]uint64, 0, len(post))
	nPost := 0
	for h, l := range post {
		hashes = append(hashes, h)
		nPost += len(l)
	}
	sort.Slice(hashes, func(i, j int) bool { return hashes[i] < hashes[j] })
	prefixes := make([]string, 0, len(maxes))
	for p := range maxes {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	for _, p := range prefixes {
		str(p)
	}
	liveKeys := make([][3]uint32, 0, len(lives))
	for k := range lives {
		liveKeys = append(liveKeys, k)
	}
	sort.Slice(liveKeys, func(i, j int) bool {
		a, b := liveKeys[i], liveKeys[j]
		return a[0] < b[0] || a[0] == b[0] && (a[1] < b[1] || a[1] == b[1] && a[2] < b[2])
	})
	var b bytes.Buffer
	b.Grow(segHeader + len(items)*itemSize + len(ids)*idSize + len(norms)*normSize + len(hashes)*12 + nPost*4)
	h := make([]byte, segHeader)
	copy(h, segMagic)
	for i, v := range []int64{k.Size, k.Mtime, k.Ctime, int64(k.Ino), k.Built} {
		binary.LittleEndian.PutUint64(h[8+8*i:], uint64(v))
	}
	copy(h[48:80], k.Hash[:])
	for i, v := range []int{len(d.Entries), len(items), len(ids), len(hashes), nPost, len(strs), len(prefixes), len(liveKeys), minSize} {
		binary.LittleEndian.PutUint32(h[80+4*i:], uint32(v))
	}
	binary.LittleEndian.PutUint32(h[120:], uint32(len(norms)))
	b.Write(h)
	var w [8]byte
	put32 := func(v uint32) { binary.LittleEndian.PutUint32(w[:4], v); b.Write(w[:4]) }
	put64 := func(v uint64) { binary.LittleEndian.PutUint64(w[:], v); b.Write(w[:]) }
	for _, r := range items {
		put64(r.norm)
		for _, v := range []uint32{r.nsh, r.entry, r.cat, r.scope, r.place, r.start, r.end, r.line, r.sect, 0} {
			put32(v)
		}
		b.Write(r.fp[:])
	}
	for _, r := range items {
		put32(r.nsh)
	}
	for _, r := range ids {
		put64(r.h)
		put32(r.s)
		put32(uint32(r.item))
	}
	for _, r := range norms {
		put64(r.h)
		put32(r.item)
		put32(0)
	}
	for _, x := range hashes {
		put64(x)
	}
	off := uint32(0)
	for _, x := range hashes {
		put32(off)
		off += uint32(len(post[x]))
	}
	put32(off)
	for _, x := range hashes {
		for _, i := range post[x] {
			put32(i)
		}
	}
	for _, p := range prefixes {
		put32(strIdx[p])
		put32(uint32(maxes[p]))
	}
	for _, k := range liveKeys {
		put32(k[0])
		put32(k[1])
		put32(k[2])
		put32(uint32(lives[k]))
	}
	off = 0
	for _, s := range strs {
		put32(off)
		off += uint32(len(s))
	}
	put32(off)
	for _, s := range strs {
		b.WriteString(s)
	}
	out := b.Bytes()
	binary.LittleEndian.PutUint32(out[116:], crc32.Checksum(out[120:], crcTable))
	return out
}

// lightEntry reports whether an entry can be read alone, from its bytes
// (mdmem.ReadTopicEntry): one plain line of a file without conflicts.
func lightEntry(d *mdmem.Doc, e *mdmem.Entry) bool {
	nl := strings.IndexByte(e.Raw, '\n')
	return len(d.Conflicts) == 0 && !e.Nested && e.HeadEnd == e.End && e.End > e.Start && e.End < 1<<31 &&
		(nl < 0 || nl == len(e.Raw)-1)
}

// entryFingerprint hashes every field of an entry, its place in its file
// included: an entry read alone is the parsed file's when they agree.
func entryFingerprint(e *mdmem.Entry) [16]byte {
	h := fnv.New128a()
	var n [8]byte
	num := func(v uint64) { binary.LittleEndian.PutUint64(n[:], v); h.Write(n[:]) }
	str := func(s string) { num(uint64(len(s))); h.Write([]byte(s)) }
	strs := func(l []string) {
		num(uint64(len(l)))
		for _, s := range l {
			str(s)
		}
	}
	tm := func(t time.Time) {
		b, _ := t.MarshalBinary()
		str(string(b))
	}
	for _, s := range []string{e.ID, e.Category, e.Content, e.Source, e.SupersededBy, e.File, e.Topic, string(e.Place), e.Section, e.Raw, e.Marker} {
		str(s)
	}
	for _, t := range []time.Time{e.Created, e.Updated, e.Expires, e.SupersededOn} {
		tm(t)
	}
	for _, l := range [][]string{e.Scope, e.Refs, e.Tags, e.See, e.Notes} {
		strs(l)
	}
	num(math.Float64bits(e.Confidence))
	for _, v := range []int{e.Line, e.Start, e.End, e.HeadEnd, boolInt(e.HasConf), boolInt(e.Nested)} {
		num(uint64(v))
	}
	var out [16]byte
	copy(out[:], h.Sum(nil))
	return out
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// errSegment says a segment cannot be used: it is rebuilt.
var errSegment = errors.New("match cache segment unusable")

// layout checks a segment's sizes against its length and fills the
// section offsets.
func (s *segment) layout() error {
	b := s.head
	if len(b) < segHeader || string(b[:8]) != segMagic {
		return errSegment
	}
	c := func(i int) int { return int(le32(b, 80+4*i)) }
	s.nEntries, s.nItems, s.nIDs, s.nHashes, s.nPost, s.nStr, s.nMax, s.nLive, s.minSize = c(0), c(1), c(2), c(3), c(4), c(5), c(6), c(7), c(8)
	o := segHeader
	s.nNorms = int(le32(b, 120))
	s.items, o = o, o+s.nItems*itemSize
	s.sizes, o = o, o+s.nItems*4
	s.ids, o = o, o+s.nIDs*idSize
	s.norms, o = o, o+s.nNorms*normSize
	s.hashes, o = o, o+s.nHashes*8
	s.offs, o = o, o+(s.nHashes+1)*4
	s.posts, o = o, o+s.nPost*4
	s.maxes, o = o, o+s.nMax*8
	s.lives, o = o, o+s.nLive*liveSize
	s.strOffs, o = o, o+(s.nStr+1)*4
	s.strs = o
	if s.nNorms > s.nItems || s.nItems > 1<<28 || s.nPost > 1<<28 || s.nHashes > 1<<28 || s.nIDs > 1<<28 || s.nStr > 1<<28 || s.nMax > 1<<28 || s.nLive > 1<<28 || o > s.size || o+int(s.u32(s.strOffs+4*s.nStr)) != s.size || int(s.u32(s.offs+4*s.nHashes)) != s.nPost || s.err != nil {
		return errSegment
	}
	return nil
}

func (s *segment) key() segKey {
	var k segKey
	k.Size, k.Mtime, k.Ctime = int64(le64(s.head, 8)), int64(le64(s.head, 16)), int64(le64(s.head, 24))
	k.Ino, k.Built = le64(s.head, 32), int64(le64(s.head, 40))
	copy(k.Hash[:], s.head[48:80])
	return k
}

// at returns the n bytes at offset o, read through the blocks (zeros
// past the end or when the read fails, which sets err).
func (s *segment) at(o, n int) []byte {
	if o < 0 || n < 0 || o+n > s.size {
		s.fail(errSegment)
		return make([]byte, n)
	}
	if b := s.block(o / blockSize); o%blockSize+n <= len(b) {
		return b[o%blockSize : o%blockSize+n]
	}
	out := make([]byte, 0, n)
	for len(out) < n {
		p := o + len(out)
		b := s.block(p / blockSize)
		if p%blockSize >= len(b) {
			return make([]byte, n) // a failed read
		}
		out = append(out, b[p%blockSize:min(len(b), p%blockSize+n-len(out))]...)
	}
	return out
}

// block returns block k of the file, reading it the first time.
func (s *segment) block(k int) []byte {
	if s.last != nil && s.lastBlk == k {
		return s.last
	}
	b, ok := s.blocks[k]
	if !ok {
		b = make([]byte, min(blockSize, s.size-k*blockSize))
		if _, err := s.f.ReadAt(b, int64(k*blockSize)); err != nil {
			s.fail(err)
			return nil
		}
		s.blocks[k] = b
	}
	s.lastBlk, s.last = k, b
	return b
}

func (s *segment) fail(err error) {
	if s.err == nil {
		s.err = fmt.Errorf("%w: %s: %v", errMatchCache, segPath("", s.slug), err)
	}
}

func (s *segment) u64(o int) uint64 { return binary.LittleEndian.Uint64(s.at(o, 8)) }
func (s *segment) u32(o int) uint32 { return binary.LittleEndian.Uint32(s.at(o, 4)) }

func (s *segment) str(i uint32) string {
	if int(i) >= s.nStr {
		return ""
	}
	a, z := s.u32(s.strOffs+4*int(i)), s.u32(s.strOffs+4*int(i)+4)
	if a > z || s.strs+int(z) > s.size {
		return ""
	}
	return string(s.at(s.strs+int(a), int(z-a)))
}

// item returns an item's normalised-text hash, shingle count, entry index
// in its file and the indexes of its category, scope and place.
func (s *segment) item(i int) (norm uint64, nsh int, entry int, cat, scope, place uint32) {
	b := s.at(s.items+i*itemSize, itemSize)
	return le64(b, 0), int(le32(b, 8)), int(le32(b, 12)), le32(b, 16), le32(b, 20), le32(b, 24)
}

// postings returns the items holding shingle h.
func (s *segment) postings(h uint64) (from, to int) {
	i := sort.Search(s.nHashes, func(i int) bool { return s.u64(s.hashes+8*i) >= h })
	if i == s.nHashes || s.u64(s.hashes+8*i) != h {
		return 0, 0
	}
	b := s.at(s.offs+4*i, 8)
	return int(le32(b, 0)), int(le32(b, 4))
}

func (s *segment) postItem(n int) int { return int(s.u32(s.posts + 4*n)) }

// postItems returns the postings [from, to) as little-endian u32s, read
// whole (one pread) into scratch the next call reuses, not into the
// blocks: a lookup counts a posting list once.
func (s *segment) postItems(from, to int) []byte {
	n := 4 * (to - from)
	if from < 0 || from > to || s.posts+4*to > s.size {
		s.fail(errSegment)
		return nil
	}
	if cap(s.post) < n {
		s.post = make([]byte, n)
	}
	b := s.post[:n]
	if _, err := s.f.ReadAt(b, int64(s.posts+4*from)); err != nil {
		s.fail(err)
		return nil
	}
	return b
}

// size is how many shingles item i holds (a small section of its own:
// the lookups read it for every item they meet).
func (s *segment) shingles(i int) int { return int(s.u32(s.sizes + 4*i)) }

// holds reports whether item i, which holds shingles, holds the one
// whose postings are [from, to) (a posting list is in item order). A
// shingle every such item holds is not looked up.
func (s *segment) holds(from, to, i int) bool {
	if to-from == s.nNorms {
		return true
	}
	n := sort.Search(to-from, func(n int) bool { return s.postItem(from+n) >= i })
	return n < to-from && s.postItem(from+n) == i
}

// loc returns where item i's entry is in its file, for an entry read
// alone (ok false: it is read with its file), and its fingerprint.
func (s *segment) loc(i int) (start, end, line int, section string, fp [16]byte, ok bool) {
	b := s.at(s.items+i*itemSize, itemSize)
	copy(fp[:], b[48:64])
	sect := le32(b, 40)
	if sect == noLight {
		return 0, 0, 0, "", fp, false
	}
	start, end, line = int(le32(b, 28)), int(le32(b, 32)), int(le32(b, 36))
	return start, end, line, s.str(sect), fp, true
}

// eachLive calls f with the category, scope and place of the items and
// how many items have them.
func (s *segment) eachLive(f func(cat, scope, place string, n int)) {
	for i := 0; i < s.nLive; i++ {
		b := s.at(s.lives+liveSize*i, liveSize)
		cat, scope, place, n := le32(b, 0), le32(b, 4), le32(b, 8), int(le32(b, 12))
		f(s.str(cat), s.str(scope), s.str(place), n)
	}
}

// exact returns the items whose normalised text hashes to h.
func (s *segment) exact(h uint64) []int {
	i := sort.Search(s.nNorms, func(i int) bool { return s.u64(s.norms+normSize*i) >= h })
	var out []int
	for ; i < s.nNorms && s.u64(s.norms+normSize*i) == h; i++ {
		out = append(out, int(s.u32(s.norms+normSize*i+8)))
	}
	return out
}

// findID returns the item of the entry with the id (-1: an entry the
// matcher does not index), and whether the file holds the id.
func (s *segment) findID(id string) (item int, ok bool) {
	h := hashString(id)
	i := sort.Search(s.nIDs, func(i int) bool { return s.u64(s.ids+idSize*i) >= h })
	for ; i < s.nIDs && s.u64(s.ids+idSize*i) == h; i++ {
		b := s.at(s.ids+idSize*i, idSize)
		str, item := le32(b, 8), int(int32(le32(b, 12)))
		if s.str(str) == id {
			return item, true
		}
	}
	return -1, false
}

// eachMax calls f with every id prefix and its largest number.
func (s *segment) eachMax(f func(prefix string, n int)) {
	for i := 0; i < s.nMax; i++ {
		b := s.at(s.maxes+8*i, 8)
		p, n := le32(b, 0), int(le32(b, 4))
		f(s.str(p), n)
	}
}

func (s *segment) close() {
	if s.f != nil {
		s.f.Close()
		s.f = nil
	}
}

func segPath(dir, slug string) string {
	return filepath.Join(dir, filepath.FromSlash(MatchCacheDir), slug+".seg")
}

// openSegment opens the segment of topic slug when it describes the file
// as it is now: the same stat key, and for a file changed within
// racyWindow of the build the same content. nil when it cannot be used.
// The segment keeps the file open: the lookups read it (pread) from the
// file whose content was checksummed here (a segment is replaced by a
// rename, never written in place).
func openSegment(dir, slug string) *segment {
	p := segPath(dir, slug)
	f, err := os.Open(p)
	if err != nil {
		return nil
	}
	fi, err := f.Stat()
	if err != nil || fi.Size() < segHeader || fi.Size() > 1<<31 {
		f.Close()
		return nil
	}
	// The whole file is checksummed through a small buffer: the blocks
	// the lookups read are all the run holds of it.
	crc, head := crc32.New(crcTable), make([]byte, segHeader)
	if _, err := io.ReadFull(f, head); err != nil {
		f.Close()
		return nil
	}
	crc.Write(head[120:])
	if _, err := io.Copy(crc, f); err != nil || crc.Sum32() != le32(head, 116) || string(head[:8]) != segMagic {
		f.Close()
		return nil
	}
	s := &segment{slug: slug, f: f, size: int(fi.Size()), head: head, blocks: map[int][]byte{}}
	if s.layout() != nil || !s.fresh(dir) {
		s.close()
		return nil
	}
	return s
}

// fresh reports whether the segment describes its topic file as it is.
func (s *segment) fresh(dir string) bool {
	want := s.key()
	p := filepath.Join(dir, filepath.FromSlash(mdmem.TopicPath(s.slug)))
	k, ok := statKey(p)
	if !ok || k.Size != want.Size || k.Mtime != want.Mtime || k.Ctime != want.Ctime || k.Ino != want.Ino {
		return false
	}
	limit := want.Built - int64(racyWindow)
	if k.Mtime < limit && k.Ctime < limit {
		return true
	}
	b, err := mdmem.ReadMemoryFile(dir, mdmem.TopicPath(s.slug))
	return err == nil && sha256.Sum256(b) == want.Hash
}

// writeSegment writes the segment of a parsed topic file, keyed by the
// file as it is on disk now (nothing when its content is not d's).
func writeSegment(ctx context.Context, dir string, d *mdmem.Doc, now time.Time) error {
	p := filepath.Join(dir, filepath.FromSlash(d.Path))
	k, ok := statKey(p)
	if !ok {
		return nil
	}
	b, err := mdmem.ReadMemoryFile(dir, d.Path)
	if err != nil || !bytes.Equal(b, d.Src) {
		return err
	}
	k2, ok := statKey(p)
	if !ok || k2 != k {
		return nil // changed while read
	}
	k.Built, k.Hash = now.UnixNano(), sha256.Sum256(b)
	seg := buildSegment(d, k)
	cd := filepath.Join(dir, filepath.FromSlash(MatchCacheDir))
	if err := os.MkdirAll(cd, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(cd, ".seg-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(seg); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), segPath(dir, d.Topic)); err != nil {
		return err
	}
	return ctx.Err()
}

// removeStaleSegments deletes the segments of topic files that are gone.
func removeStaleSegments(dir string, slugs []string) {
	have := map[string]bool{}
	for _, s := range slugs {
		have[s] = true
	}
	ents, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(MatchCacheDir)))
	if err != nil {
		return
	}
	for _, e := range ents {
		n := e.Name()
		if strings.HasSuffix(n, ".seg") && !have[strings.TrimSuffix(n, ".seg")] {
			_ = os.Remove(filepath.Join(dir, filepath.FromSlash(MatchCacheDir), n))
		}
	}
}
