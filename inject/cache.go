package inject

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/memctl/memctl/mdmem"
	"github.com/memctl/memctl/mdmem/osfile"
)

// IndexCacheFile is the memory-relative path of the index cache's
// manifest (segments.go): every memory file's key and the segment files
// (in SegmentDir) that hold the parsed notes, the default ranker's index
// and the notes' token counts of a run of memory files, so inject need not
// parse the Markdown, analyse text or load a tokenizer on every call. It
// is derived data in the git-ignored cache directory; a changed memory
// file rewrites only its own segment and the small manifest.
//
// A segment file is memory-mapped and read in place: a query reads the
// postings of its terms and the records of the notes it prints, and
// nothing else of size proportional to the postings or the text. Layout:
// a 32-byte header (magic with the format version, file size, offset of
// the section directory), the sections, each aligned to 8 bytes, then the
// directory (offset, length and CRC-32C of every section, and its own
// CRC-32C). The small sections (file key, files, topics, token count
// head, the term dictionary) and the per-note columns a ranking scans
// (flags, field lengths, line token counts) are checked against
// their CRC when the file is opened (until the manifest records the
// file's stamp as checked, segStamp); postings carry a CRC per term and
// note records a CRC per note, checked on first use, and the ids and
// dates are checked when first needed. A mismatch found after opening
// switches the corpus to the Markdown (Corpus.fallback), so a corrupt
// cache never gives wrong output. Writes are streamed to a temporary file
// and renamed to a new name (a segment is never modified in place, so a
// mapping never sees it change), without fsync (writeCacheAtomic: a file
// a crash left torn fails these checks and is rebuilt). (The name is that
// of the gob cache of earlier versions, which the testscripts check for;
// an older header is rejected and rebuilt.)
const IndexCacheFile = CacheDir + "/index.bin"

const (
	cacheMagic  = "memctl-segmt-v7\n"
	cacheHeader = 32 // magic (16), file size (8), directory offset (8)
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Sections of the cache file. Per-note arrays have one element per note;
// per-term arrays one per term id.
const (
	secKey         = iota               // file keys (varint)
	secFiles                            // corpus files in note order, with their notes (varint)
	secTopics                           // topic front matter (varint)
	secTok                              // token table: tokenizer name, fixed strings' counts, digit counts (varint)
	secTokLine                          // []uint16 per note
	secTokRef                           // []uint8 per note
	secTokPieces                        // counts of the chunks lines are summed from (varint; read by updates only)
	secFlags                            // []uint8 per note: place and which optional fields are set
	secCreatedSec                       // []int64 per note
	secCreatedNsec                      // []uint32 per note
	secUpdatedSec                       // []int64 per note
	secUpdatedNsec                      // []uint32 per note
	secSession                          // []uint32 per note: 0 without a creation date, else one number per file and creation time
	secRecOff                           // []uint64, notes+1: the note records' offsets in secRecs
	secRecCRC                           // []uint32 per note: CRC-32C of its record
	secRecs                             // note records (varint)
	secIDOff                            // []uint32, notes+1: offsets in secIDs
	secIDs                              // the notes' ids
	secIDHash                           // []uint64 per note with an id: the ids' hashes (idHash), sorted
	secIDNote                           // []int32, aligned with secIDHash: the note of each
	secIndex                            // analyzer key, notes, field length totals (varint)
	secDocLen                           // nFields × []uint16 per note
	secTermOff     = iota + nFields - 1 // []int32, terms+1: sorted terms as offsets in secTermBlob (after the nFields secDocLen)
	secTermID                           // []int32 per sorted term
	secTermBlob                         // the sorted terms
	secPostStart                        // []int32, terms+1, by id
	secPostCRC                          // []uint32 per term id: CRC-32C of its postings (docs, then each field's frequencies)
	secPost                             // per term id: its postings' notes ([]int32), then each field's frequencies ([]uint16)
	nSecs
)

// postingSize is the bytes of one posting in secPost: its note and each
// field's frequency.
const postingSize = 4 + 2*nFields

// perItem are the sections checked per item (note record, term's
// postings), which carry no CRC of their own in the directory.
func perItem(s int) bool {
	return s == secRecs || s == secRecOff || s == secRecCRC || s == secPost
}

// lazySec are the sections not checked when the file is opened: each
// part is checked when it is first read (the dates and ids whole, the
// records and postings each on its own).
func lazySec(s int) bool {
	return s == secTokPieces || s >= secCreatedSec && s <= secUpdatedNsec || s == secRecOff || s == secRecCRC || s == secRecs ||
		s == secIDOff || s == secIDs || s == secIDHash || s == secIDNote || s == secPost
}

// Flags of a note (secFlags): its place in the low bits, then which of
// the fields that make it ineligible or filter it are set.
const (
	nfPlace      = 7
	nfSuperseded = 1 << (3 + iota)
	nfExpires
	nfScope
	nfTags
)

var placeCodes = []mdmem.Place{"", mdmem.PlaceCore, mdmem.PlacePending, mdmem.PlaceTopic, mdmem.PlaceArchive, mdmem.PlaceOther}

// noteMeta is what a ranking scans of every note: the columns.
type noteMeta struct {
	flags        uint8
	cSec, uSec   int64
	cNsec, uNsec uint32
}

func metaOf(n *Note) noteMeta {
	return noteMeta{flags: flagsOf(n), cSec: n.Created.Unix(), cNsec: uint32(n.Created.Nanosecond()),
		uSec: n.Updated.Unix(), uNsec: uint32(n.Updated.Nanosecond())}
}

func flagsOf(n *Note) uint8 {
	var f uint8
	for k, p := range placeCodes {
		if k > 0 && n.Place == p {
			f = uint8(k)
		}
	}
	if n.SupersededBy != "" {
		f |= nfSuperseded
	}
	if !n.Expires.IsZero() {
		f |= nfExpires
	}
	if len(n.Scope) > 0 {
		f |= nfScope
	}
	if len(n.Tags) > 0 {
		f |= nfTags
	}
	return f
}

// fileRange is one memory file's notes: [Start, Start+Count).
type fileRange struct {
	Path         string
	Start, Count int
}

// fileRanges finds the files of notes in file order.
func fileRanges(n int, file func(i int) string) []fileRange {
	var out []fileRange
	for i := 0; i < n; i++ {
		f := file(i)
		if k := len(out) - 1; k >= 0 && out[k].Path == f {
			out[k].Count++
			continue
		}
		out = append(out, fileRange{Path: f, Start: i, Count: 1})
	}
	return out
}

// sharedIDs lists, in file order, the notes whose id another note has too
// (the only ones laterDuplicates needs to look at). The ids id returns
// need stay valid only during the call.
func sharedIDs(n int, id func(i int) string) []int32 {
	first := make(map[string]int32, n)
	var out []int32
	seen := map[int32]bool{}
	for i := 0; i < n; i++ {
		s := id(i)
		if s == "" {
			continue
		}
		j, ok := first[s]
		if !ok {
			first[s] = int32(i)
			continue
		}
		if !seen[j] {
			seen[j] = true
			out = append(out, j)
		}
		out = append(out, int32(i))
	}
	slices.Sort(out)
	return out
}

// ---- encoding ----

// cacheSource is what a segment file is written from: the corpus parsed
// from its memory files' Markdown.
type cacheSource struct {
	key    []fileKey
	files  []fileRange
	topics []TopicInfo
	n      int
	meta   func(i int) noteMeta
	id     func(i int) string
	record func(b []byte, i int) ([]byte, uint32) // appends note i's record; returns its CRC-32C too
	tok    *tokTable                              // nil: no token counts
	ix     func() *Index                          // the default ranker's (asked for after the notes are written)
}

// corpusSource writes a corpus held in memory.
func corpusSource(key []fileKey, c *Corpus, ix func() *Index) *cacheSource {
	return &cacheSource{
		key: key, files: fileRanges(len(c.notes), func(i int) string { return c.notes[i].File }),
		topics: c.Topics, n: len(c.notes),
		meta: func(i int) noteMeta { return metaOf(&c.notes[i]) },
		id:   func(i int) string { return c.notes[i].ID },
		record: func(b []byte, i int) ([]byte, uint32) {
			rec := appendRecord(b, &c.notes[i])
			return rec, crc32.Checksum(rec[len(b):], castagnoli)
		},
		tok: c.tok, ix: ix,
	}
}

// cacheWriter streams the file to w through a small buffer, keeping each
// section's offset, length and CRC-32C for the directory, so the cache is
// never held in memory whole.
type cacheWriter struct {
	w     io.Writer
	b     []byte
	n     int64 // bytes written to w, the header's included
	crc   uint32
	nocrc bool // the section has CRCs per item instead
	err   error
	dir   [nSecs]struct {
		off, n int64
		crc    uint32
	}
}

const cacheChunk = 64 << 10

func (w *cacheWriter) flush() {
	if len(w.b) == 0 {
		return
	}
	if !w.nocrc {
		w.crc = crc32.Update(w.crc, castagnoli, w.b)
	}
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

// begin starts section s at the next multiple of 8.
func (w *cacheWriter) begin(s int) {
	w.align()
	w.flush()
	w.crc = 0
	w.nocrc = perItem(s)
	w.dir[s].off = w.n
}

func (w *cacheWriter) end(s int) {
	w.flush()
	w.dir[s].n = w.n - w.dir[s].off
	w.dir[s].crc = w.crc
}

func (w *cacheWriter) uvarint(x uint64) { w.b = binary.AppendUvarint(w.b, x) }
func (w *cacheWriter) varint(x int64)   { w.b = binary.AppendVarint(w.b, x) }
func (w *cacheWriter) str(s string)     { w.uvarint(uint64(len(s))); w.raw([]byte(s)) }
func (w *cacheWriter) strs(l []string) {
	w.uvarint(uint64(len(l)))
	for _, s := range l {
		w.str(s)
	}
}
func (w *cacheWriter) raw(a []byte) {
	for len(a) > 0 {
		k := min(len(a), cacheChunk)
		w.b = append(w.b, a[:k]...)
		a = a[k:]
		w.more()
	}
}

// cacheInt are the element types of the cache's arrays.
type cacheInt interface {
	~uint8 | ~uint16 | ~uint32 | ~int32 | ~int64 | ~uint64
}

// leBytes returns a's little-endian bytes: a itself on a little-endian
// machine.
func leBytes[T cacheInt](a []T) []byte {
	if len(a) == 0 {
		return nil
	}
	size := int(unsafe.Sizeof(a[0]))
	if littleEndian {
		return unsafe.Slice((*byte)(unsafe.Pointer(&a[0])), size*len(a))
	}
	out := make([]byte, 0, size*len(a))
	for _, x := range a {
		for k := 0; k < size; k++ {
			out = append(out, byte(uint64(x)>>(8*k)))
		}
	}
	return out
}

// viewOf returns b as a []T: in place on a little-endian machine (b
// aligned), else a decoded copy. ok is false when b is not a whole number
// of elements.
func viewOf[T cacheInt](b []byte) (out []T, ok bool) {
	var z T
	size := int(unsafe.Sizeof(z))
	if len(b)%size != 0 {
		return nil, false
	}
	n := len(b) / size
	if n == 0 {
		return []T{}, true
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%uintptr(size) == 0 {
		return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), n), true
	}
	out = make([]T, n)
	for i := range out {
		var x uint64
		for k := size - 1; k >= 0; k-- {
			x = x<<8 | uint64(b[i*size+k])
		}
		out[i] = T(x)
	}
	return out, true
}

var littleEndian = func() bool { x := uint16(1); return *(*byte)(unsafe.Pointer(&x)) == 1 }()

func writeArray[T cacheInt](w *cacheWriter, s int, a []T) {
	w.begin(s)
	w.raw(leBytes(a))
	w.end(s)
}

// Flags of a note record: which dates follow.
const (
	rfCreated = 1 << iota
	rfUpdated
	rfExpires
)

// appendRecord encodes a note.
func appendRecord(b []byte, n *Note) []byte {
	var fl byte
	if !n.Created.IsZero() {
		fl |= rfCreated
	}
	if !n.Updated.IsZero() {
		fl |= rfUpdated
	}
	if !n.Expires.IsZero() {
		fl |= rfExpires
	}
	b = append(b, fl)
	for _, s := range [...]string{n.ID, n.Category, n.Content, n.Source, n.SupersededBy, string(n.Place), n.File, n.Topic, n.Section} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = binary.AppendUvarint(b, uint64(n.Line))
	for _, l := range [...][]string{n.Scope, n.Refs, n.Tags, n.See, n.Notes} {
		b = binary.AppendUvarint(b, uint64(len(l)))
		for _, s := range l {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
	}
	for k, t := range [...]time.Time{n.Created, n.Updated, n.Expires} {
		if fl&(1<<k) != 0 {
			b = binary.AppendVarint(b, t.Unix())
			b = binary.AppendUvarint(b, uint64(t.Nanosecond()))
		}
	}
	return b
}

// writeCache writes the file after its header to dst (which starts
// cacheHeader bytes into the file) and returns the header. Each step writes
// a group of sections, in the order they lie in the file.
func writeCache(dst io.Writer, s *cacheSource) ([cacheHeader]byte, error) {
	w := &cacheWriter{w: dst, b: make([]byte, 0, cacheChunk+1024), n: cacheHeader}
	w.writeKeyFilesTopics(s)
	w.writeTokens(s.tok)
	w.writeColumns(s)
	w.writeRecords(s)
	w.writeIDs(s)
	ix := s.ix()
	w.writeIndex(ix)
	w.writePostings(ix)
	return w.finish()
}

// writeKeyFilesTopics writes the file key, the files with their notes and
// the topics' front matter.
func (w *cacheWriter) writeKeyFilesTopics(s *cacheSource) {
	w.begin(secKey)
	w.uvarint(uint64(len(s.key)))
	for _, k := range s.key {
		w.str(k.Path)
		w.varint(k.Size)
		w.varint(k.Mtime)
		w.varint(k.Ctime)
		w.uvarint(k.Ino)
		w.str(string(k.Hash))
	}
	w.end(secKey)
	w.begin(secFiles)
	w.uvarint(uint64(len(s.files)))
	for _, f := range s.files {
		w.str(f.Path)
		w.uvarint(uint64(f.Start))
		w.uvarint(uint64(f.Count))
	}
	w.end(secFiles)
	w.begin(secTopics)
	w.uvarint(uint64(len(s.topics)))
	for _, t := range s.topics {
		w.str(t.Slug)
		w.str(t.Description)
		w.strs(t.Keywords)
	}
	w.end(secTopics)
}

// writeTokens writes the token table (only its name, empty, when t is
// nil): the fixed strings' and digits' counts, the per-note counts and
// the chunk counts.
func (w *cacheWriter) writeTokens(t *tokTable) {
	w.begin(secTok)
	if t == nil {
		w.str("")
		w.end(secTok)
		return
	}
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
	w.str(string(t.digits))
	w.end(secTok)
	writeArray(w, secTokLine, t.line)
	writeArray(w, secTokRef, t.ref)
	pieces := make([]string, 0, len(t.pieces))
	for s := range t.pieces {
		pieces = append(pieces, s)
	}
	sort.Strings(pieces)
	w.begin(secTokPieces)
	w.uvarint(uint64(len(pieces)))
	for _, s := range pieces {
		w.str(s)
		w.uvarint(uint64(t.pieces[s]))
	}
	w.end(secTokPieces)
}

// writeColumns writes the per-note columns a ranking scans: flags,
// dates and session numbers.
func (w *cacheWriter) writeColumns(s *cacheSource) {
	metas := make([]noteMeta, s.n)
	for i := range metas {
		metas[i] = s.meta(i)
	}
	column := func(sec int, put func(b []byte, m *noteMeta) []byte) {
		w.begin(sec)
		for i := range metas {
			w.b = put(w.b, &metas[i])
			w.more()
		}
		w.end(sec)
	}
	column(secFlags, func(b []byte, m *noteMeta) []byte { return append(b, m.flags) })
	column(secCreatedSec, func(b []byte, m *noteMeta) []byte { return binary.LittleEndian.AppendUint64(b, uint64(m.cSec)) })
	column(secCreatedNsec, func(b []byte, m *noteMeta) []byte { return binary.LittleEndian.AppendUint32(b, m.cNsec) })
	column(secUpdatedSec, func(b []byte, m *noteMeta) []byte { return binary.LittleEndian.AppendUint64(b, uint64(m.uSec)) })
	column(secUpdatedNsec, func(b []byte, m *noteMeta) []byte { return binary.LittleEndian.AppendUint32(b, m.uNsec) })
	session := sessionNumbers(s.files, metas)
	metas = nil
	writeArray(w, secSession, session)
}

// sessionNumbers numbers the notes' sessions: 0 without a creation date,
// else one number per file and creation time, in order of first use.
func sessionNumbers(files []fileRange, metas []noteMeta) []uint32 {
	session := make([]uint32, len(metas))
	type sessionKey struct {
		file int
		sec  int64
		nsec uint32
	}
	sessions := map[sessionKey]uint32{}
	for k, f := range files {
		for i := f.Start; i < f.Start+f.Count; i++ {
			if m := &metas[i]; m.cSec != zeroSec || m.cNsec != 0 {
				sk := sessionKey{k, m.cSec, m.cNsec}
				if sessions[sk] == 0 {
					sessions[sk] = uint32(len(sessions) + 1)
				}
				session[i] = sessions[sk]
			}
		}
	}
	return session
}

// writeRecords writes the note records, then their offsets and CRCs.
func (w *cacheWriter) writeRecords(s *cacheSource) {
	recOff := make([]uint64, s.n+1)
	recCRC := make([]uint32, s.n)
	w.begin(secRecs)
	var rec []byte
	for i := 0; i < s.n; i++ {
		rec, recCRC[i] = s.record(rec[:0], i)
		recOff[i+1] = recOff[i] + uint64(len(rec))
		w.raw(rec)
	}
	w.end(secRecs)
	writeArray(w, secRecOff, recOff)
	writeArray(w, secRecCRC, recCRC)
}

// writeIDs writes the notes' ids and their offsets.
func (w *cacheWriter) writeIDs(s *cacheSource) {
	idOff := make([]uint32, s.n+1)
	w.begin(secIDs)
	for i := 0; i < s.n; i++ {
		id := s.id(i)
		idOff[i+1] = idOff[i] + uint32(len(id))
		w.b = append(w.b, id...)
		w.more()
	}
	w.end(secIDs)
	writeArray(w, secIDOff, idOff)
	type hashed struct {
		h    uint64
		note int32
	}
	var hs []hashed
	for i := 0; i < s.n; i++ {
		if id := s.id(i); id != "" {
			hs = append(hs, hashed{idHash(id), int32(i)})
		}
	}
	slices.SortFunc(hs, func(a, b hashed) int { return cmp.Or(cmp.Compare(a.h, b.h), cmp.Compare(a.note, b.note)) })
	hash, note := make([]uint64, len(hs)), make([]int32, len(hs))
	for k, x := range hs {
		hash[k], note[k] = x.h, x.note
	}
	writeArray(w, secIDHash, hash)
	writeArray(w, secIDNote, note)
}

// idHash is the 64-bit FNV-1a hash of an id: a segment's ids sorted by
// it let duplicate ids across segments be found by merging (sharedIDs).
func idHash(id string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(id); i++ {
		h ^= uint64(id[i])
		h *= 1099511628211
	}
	return h
}

// writeIndex writes the index's header (analyzer, notes, field length
// totals), the field lengths, the sorted term dictionary and the
// postings' starts.
func (w *cacheWriter) writeIndex(ix *Index) {
	w.begin(secIndex)
	w.str(ix.An.key())
	w.uvarint(uint64(ix.N))
	for _, t := range ix.total {
		w.uvarint(t)
	}
	w.end(secIndex)
	for f := range ix.DocLen {
		writeArray(w, secDocLen+f, ix.DocLen[f])
	}
	offs, ids, blob := ix.termOff, ix.termID, ix.termBlob
	if ix.Terms != nil {
		offs, ids, blob = sortedTerms(ix.Terms)
	}
	writeArray(w, secTermOff, offs)
	writeArray(w, secTermID, ids)
	writeArray(w, secTermBlob, blob)
	writeArray(w, secPostStart, ix.PostStart)
}

// sortedTerms lays out a term map as the cache's dictionary: the terms
// sorted and concatenated, their end offsets (after a leading 0) and ids.
func sortedTerms(m map[string]int32) (offs, ids []int32, blob []byte) {
	terms := make([]string, 0, len(m))
	for s := range m {
		terms = append(terms, s)
	}
	sort.Strings(terms)
	offs = make([]int32, len(terms)+1)
	ids = make([]int32, len(terms))
	for i, s := range terms {
		blob = append(blob, s...)
		offs[i+1] = int32(len(blob))
		ids[i] = m[s]
	}
	return offs, ids, blob
}

// writePostings writes the postings term by term, each term's notes
// then each field's frequencies (so that a term's postings are read with
// one read), then each term's CRC-32C.
func (w *cacheWriter) writePostings(ix *Index) {
	crcs := make([]uint32, len(ix.PostStart)-1)
	w.begin(secPost)
	for t := range crcs {
		a, b := ix.PostStart[t], ix.PostStart[t+1]
		k := len(w.b)
		w.b = append(w.b, leBytes(ix.PostDoc[a:b])...)
		for f := range ix.PostTF {
			w.b = append(w.b, leBytes(ix.PostTF[f][a:b])...)
		}
		crcs[t] = crc32.Checksum(w.b[k:], castagnoli)
		w.more()
	}
	w.end(secPost)
	writeArray(w, secPostCRC, crcs)
}

func (w *cacheWriter) align() {
	for (w.n+int64(len(w.b)))%8 != 0 {
		w.b = append(w.b, 0)
	}
}

// finish writes the directory and returns the header.
func (w *cacheWriter) finish() ([cacheHeader]byte, error) {
	w.align()
	w.flush()
	dirOff := w.n
	d := make([]byte, 0, nSecs*24+4)
	for _, e := range w.dir {
		d = binary.LittleEndian.AppendUint64(d, uint64(e.off))
		d = binary.LittleEndian.AppendUint64(d, uint64(e.n))
		d = binary.LittleEndian.AppendUint32(d, e.crc)
		d = binary.LittleEndian.AppendUint32(d, 0)
	}
	d = binary.LittleEndian.AppendUint32(d, crc32.Checksum(d, castagnoli))
	w.raw(d)
	w.flush()
	var h [cacheHeader]byte
	copy(h[:], cacheMagic)
	binary.LittleEndian.PutUint64(h[16:], uint64(w.n))
	binary.LittleEndian.PutUint64(h[24:], uint64(dirOff))
	return h, w.err
}

// ---- decoding ----

var errCorrupt = errors.New("index cache: corrupt")

// cacheReader decodes a varint section. Strings are copied: notes
// outlive the mapping's use.
type cacheReader struct {
	b   []byte
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

// count reads a count of items of at least size bytes each.
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

func (r *cacheReader) str() string { return string(r.raw(r.count(1))) }

func (r *cacheReader) strs() []string {
	n := r.count(1)
	if n == 0 {
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
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

func (r *cacheReader) keys() []fileKey {
	out := make([]fileKey, r.count(1))
	for i := range out {
		out[i] = fileKey{Path: r.str(), Size: r.varint(), Mtime: r.varint(), Ctime: r.varint(), Ino: r.uvarint(), Hash: []byte(r.str())}
		if len(out[i].Hash) == 0 {
			out[i].Hash = nil
		}
	}
	return out
}

// decodeRecord decodes a note record (appendRecord).
func decodeRecord(b []byte) (*Note, bool) {
	r := &cacheReader{b: b}
	fl := r.raw(1)
	if len(fl) == 0 {
		return nil, false
	}
	n := &Note{}
	n.ID, n.Category, n.Content, n.Source, n.SupersededBy = r.str(), r.str(), r.str(), r.str(), r.str()
	n.Place, n.File, n.Topic, n.Section = mdmem.Place(r.str()), r.str(), r.str(), r.str()
	n.Line = int(r.uvarint())
	n.Scope, n.Refs, n.Tags, n.See, n.Notes = r.strs(), r.strs(), r.strs(), r.strs(), r.strs()
	if fl[0]&rfCreated != 0 {
		n.Created = r.time()
	}
	if fl[0]&rfUpdated != 0 {
		n.Updated = r.time()
	}
	if fl[0]&rfExpires != 0 {
		n.Expires = r.time()
	}
	return n, r.err == nil && r.p == len(b)
}

// cacheFile is a memory-mapped cache file, with its sections located and
// their lengths and offsets checked, but not yet their contents. The
// mapping is released when the cacheFile is no longer reachable:
// everything that views it (the lazy notes, the index, the token table)
// keeps a pointer to it.
type cacheFile struct {
	b     []byte
	sec   [nSecs][]byte
	off   [nSecs]int64 // the sections' offsets in the file
	crc   [nSecs]uint32
	stamp segStamp // the file's, taken before anything is read
	file  *os.File // note records are read from it (reading them through the mapping would map their neighbours too)
}

// openSegment maps a segment file and locates its sections.
func openSegment(ctx context.Context, path string) (*cacheFile, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	size := fi.Size()
	if size < cacheHeader || size > math.MaxInt32*int64(8) || !fi.Mode().IsRegular() {
		f.Close()
		return nil, errors.New("index cache: bad size")
	}
	b, unmap, err := osfile.Map(f, size)
	if err != nil {
		f.Close()
		return nil, err
	}
	cf := &cacheFile{b: b, file: f, stamp: segStamp{Size: size}}
	cf.stamp.Ino, cf.stamp.Ctime = osfile.InodeAndCtime(fi)
	runtime.AddCleanup(cf, func(unmap func()) { unmap() }, unmap)
	if err := cf.locate(); err != nil {
		return nil, err
	}
	return cf, nil
}

// locate checks the header and the directory, and slices the sections.
func (cf *cacheFile) locate() error {
	b := cf.b
	// The header and the directory are read (pread), not viewed in the
	// mapping, which would map the 64 KiB around each.
	var h [cacheHeader]byte
	if _, err := cf.file.ReadAt(h[:], 0); err != nil {
		return err
	}
	if string(h[:len(cacheMagic)]) != cacheMagic {
		return errors.New("index cache: bad header (another version)")
	}
	size := uint64(len(b))
	if binary.LittleEndian.Uint64(h[16:]) != size {
		return errors.New("index cache: wrong length (truncated)")
	}
	const dirLen = nSecs*24 + 4
	dirOff := binary.LittleEndian.Uint64(h[24:])
	if dirOff < cacheHeader || dirOff%8 != 0 || dirOff+dirLen != size {
		return errCorrupt
	}
	d := make([]byte, dirLen)
	if _, err := cf.file.ReadAt(d, int64(dirOff)); err != nil {
		return err
	}
	if crc32.Checksum(d[:dirLen-4], castagnoli) != binary.LittleEndian.Uint32(d[dirLen-4:]) {
		return errors.New("index cache: checksum mismatch (corrupt)")
	}
	for s := range cf.sec {
		e := d[24*s:]
		off, n := binary.LittleEndian.Uint64(e), binary.LittleEndian.Uint64(e[8:])
		cf.crc[s] = binary.LittleEndian.Uint32(e[16:])
		if n == 0 {
			continue
		}
		if off < cacheHeader || off%8 != 0 || off > dirOff || n > dirOff-off {
			return errCorrupt
		}
		cf.sec[s] = b[off : off+n : off+n]
		cf.off[s] = int64(off)
	}
	return nil
}

// verify checks section s against its CRC.
func (cf *cacheFile) verify(s int) bool { return crc32.Checksum(cf.sec[s], castagnoli) == cf.crc[s] }

// key returns the file key the cache was built for.
func (cf *cacheFile) key() ([]fileKey, error) {
	if !cf.verify(secKey) {
		return nil, errCorrupt
	}
	r := &cacheReader{b: cf.sec[secKey]}
	k := r.keys()
	if r.err != nil || r.p != len(r.b) {
		return nil, errCorrupt
	}
	return k, nil
}

// files returns the memory files in note order with their notes, and the
// topics.
func (cf *cacheFile) files(n int) ([]fileRange, []TopicInfo, error) {
	r := &cacheReader{b: cf.sec[secFiles]}
	files := make([]fileRange, r.count(3))
	next := 0
	for i := range files {
		files[i] = fileRange{Path: r.str(), Start: int(r.uvarint()), Count: int(r.uvarint())}
		if files[i].Start != next || files[i].Count > n-next {
			r.fail()
			break
		}
		next += files[i].Count
	}
	if r.err != nil || r.p != len(r.b) || next != n {
		return nil, nil, errCorrupt
	}
	r = &cacheReader{b: cf.sec[secTopics]}
	topics := make([]TopicInfo, r.count(3))
	for i := range topics {
		topics[i] = TopicInfo{Slug: r.str(), Description: r.str(), Keywords: r.strs()}
	}
	if r.err != nil || r.p != len(r.b) {
		return nil, nil, errCorrupt
	}
	return files, topics, nil
}

// tokens returns the token table (nil when the cache has none) for n
// notes. Its head (tokenizer name, fixed strings' counts, digit counts)
// is decoded once per distinct content through heads: segments written
// with one tokenizer share it, and share one consts map.
func (cf *cacheFile) tokens(n int, heads *tokHeads) (*tokTable, error) {
	head, err := heads.decode(cf.sec[secTok])
	if head == nil {
		return nil, err
	}
	t := &tokTable{name: head.name, consts: head.consts, digits: head.digits, keep: cf}
	var ok1, ok2 bool
	t.line, ok1 = viewOf[uint16](cf.sec[secTokLine])
	t.ref, ok2 = viewOf[uint8](cf.sec[secTokRef])
	if !ok1 || !ok2 || len(t.line) != n || len(t.ref) != n {
		return nil, errCorrupt
	}
	return t, nil
}

// tokHead is a decoded token table head (section secTok). Its consts map
// is shared and never written.
type tokHead struct {
	name   string
	consts map[string]int
	digits []byte
}

// tokHeads decodes token table heads, each distinct content once; safe
// for concurrent use. A nil *tokHeads decodes every time.
type tokHeads struct {
	mu   sync.Mutex
	seen map[string]*tokHead
}

// decode returns the head b holds: nil with a nil error when the segment
// has no token table, nil with errCorrupt when b is malformed.
func (h *tokHeads) decode(b []byte) (*tokHead, error) {
	if h != nil {
		h.mu.Lock()
		defer h.mu.Unlock()
		if d, ok := h.seen[string(b)]; ok {
			return d, nil
		}
	}
	r := &cacheReader{b: b}
	d := &tokHead{name: r.str()}
	if d.name == "" {
		return nil, r.err
	}
	k := r.count(2)
	d.consts = make(map[string]int, k)
	for ; k > 0; k-- {
		s := r.str()
		d.consts[s] = int(r.uvarint())
	}
	d.digits = []byte(r.str())
	if r.err != nil || r.p != len(r.b) || len(d.digits) != digitTableLen {
		return nil, errCorrupt
	}
	if h != nil {
		if h.seen == nil {
			h.seen = map[string]*tokHead{}
		}
		h.seen[string(b)] = d
	}
	return d, nil
}

// pieces returns the chunk counts of the token table (tokTable.pieces).
func (cf *cacheFile) pieces() (map[string]uint32, error) {
	r := &cacheReader{b: cf.sec[secTokPieces]}
	if len(r.b) == 0 {
		return map[string]uint32{}, nil
	}
	n := r.count(2)
	m := make(map[string]uint32, n)
	for ; n > 0; n-- {
		s := r.str()
		m[s] = uint32(r.uvarint())
	}
	if r.err != nil || r.p != len(r.b) {
		return nil, errCorrupt
	}
	return m, nil
}

// index returns the index, viewed in place; its postings are checked
// per term when first read (Index.readRun). The dictionary's order and
// bounds (Index.valid) are checked unless trusted (segStamp).
func (cf *cacheFile) index(trusted bool) (*Index, error) {
	r := &cacheReader{b: cf.sec[secIndex]}
	an := r.str()
	ix := &Index{N: int(r.uvarint()), keep: cf}
	for f := range ix.total {
		ix.total[f] = r.uvarint()
		if ix.N > 0 {
			ix.AvgLen[f] = float64(ix.total[f]) / float64(ix.N)
		}
	}
	known := false
	for _, rp := range Rankers {
		if rp.An.key() == an {
			ix.An, known = rp.An, true
		}
	}
	ok := r.err == nil && r.p == len(r.b) && known
	view16 := func(s int) []uint16 {
		v, good := viewOf[uint16](cf.sec[s])
		ok = ok && good
		return v
	}
	view32 := func(s int) []int32 {
		v, good := viewOf[int32](cf.sec[s])
		ok = ok && good
		return v
	}
	for f := range ix.DocLen {
		ix.DocLen[f] = view16(secDocLen + f)
	}
	ix.termOff, ix.termID, ix.termBlob = view32(secTermOff), view32(secTermID), cf.sec[secTermBlob]
	ix.PostStart = view32(secPostStart)
	crcs, good := viewOf[uint32](cf.sec[secPostCRC])
	ix.postCRC = crcs
	if !ok || !good || !(trusted || ix.valid(ix.N)) || len(cf.sec[secPost]) != postingSize*int(ix.PostStart[len(ix.PostStart)-1]) {
		return nil, errCorrupt
	}
	return ix, nil
}

// segment returns the segment read in place: the sections checked when
// the file is opened are checked (unless trusted: the manifest recorded
// this file's stamp as checked, segStamp), the rest is read when needed.
// The structure is checked either way (lengths, offsets, dictionary).
func (cf *cacheFile) segment(heads *tokHeads, trusted bool) (*segment, error) {
	// The sections checked whole stay in the mapping: read into memory
	// instead (pread), they would cost less memory (through the mapping,
	// each maps the 64 KiB around it, once per segment) but more time
	// (copied and zeroed pages: at 100k entries in ~40 segments, 36 →
	// 28 MiB for 27 → 36 ms of CPU a cached inject).
	for s := range cf.sec {
		if !trusted && !lazySec(s) && !cf.verify(s) {
			return nil, errCorrupt
		}
	}
	ix, err := cf.index(trusted)
	if err != nil {
		return nil, err
	}
	n := ix.N
	_, topics, err := cf.files(n) // checked: the files' notes add up
	if err != nil {
		return nil, err
	}
	tok, err := cf.tokens(n, heads)
	if err != nil {
		return nil, err
	}
	lz := &segNotes{f: cf, n: n, memo: map[int32]*Note{}, recsLen: uint64(len(cf.sec[secRecs])), ids: cf.sec[secIDs]}
	ok := true
	view := func(dst any, s, want int) {
		var good bool
		var got int
		switch d := dst.(type) {
		case *[]uint8:
			*d, good = viewOf[uint8](cf.sec[s])
			got = len(*d)
		case *[]int64:
			*d, good = viewOf[int64](cf.sec[s])
			got = len(*d)
		case *[]uint32:
			*d, good = viewOf[uint32](cf.sec[s])
			got = len(*d)
		case *[]uint64:
			*d, good = viewOf[uint64](cf.sec[s])
			got = len(*d)
		case *[]int32:
			*d, good = viewOf[int32](cf.sec[s])
			got = len(*d)
		}
		ok = ok && good && (want < 0 || got == want)
	}
	view(&lz.flags, secFlags, n)
	view(&lz.cSec, secCreatedSec, n)
	view(&lz.cNsec, secCreatedNsec, n)
	view(&lz.uSec, secUpdatedSec, n)
	view(&lz.uNsec, secUpdatedNsec, n)
	view(&lz.session, secSession, n)
	view(&lz.recOff, secRecOff, n+1)
	view(&lz.recCRC, secRecCRC, n)
	view(&lz.idOff, secIDOff, n+1)
	view(&lz.idHash, secIDHash, -1)
	view(&lz.idNote, secIDNote, len(lz.idHash))
	if !ok {
		return nil, errCorrupt
	}
	key, err := cf.key()
	if err != nil {
		return nil, err
	}
	return &segment{key: key, notes: lz, topics: topics, tok: tok, ix: ix}, nil
}

// valid checks the index's dictionary and array lengths against each
// other, so that a cache that passed its checksums but was written wrong
// cannot index out of range. The postings themselves are checked per
// term when first read.
func (ix *Index) valid(nDocs int) bool {
	nt := len(ix.termID)
	if ix.N != nDocs || len(ix.termOff) != nt+1 || len(ix.PostStart) != nt+1 || len(ix.postCRC) != nt ||
		ix.termOff[0] != 0 || int(ix.termOff[nt]) != len(ix.termBlob) {
		return false
	}
	for i := 0; i < nt; i++ {
		if ix.termOff[i] > ix.termOff[i+1] || ix.termID[i] < 0 || int(ix.termID[i]) >= nt ||
			ix.PostStart[i] > ix.PostStart[i+1] {
			return false
		}
		if i > 0 && string(ix.termBlob[ix.termOff[i-1]:ix.termOff[i]]) >= string(ix.termBlob[ix.termOff[i]:ix.termOff[i+1]]) {
			return false
		}
	}
	if ix.PostStart[0] != 0 {
		return false
	}
	for f := range ix.DocLen {
		if len(ix.DocLen[f]) != nDocs {
			return false
		}
	}
	return true
}

// readRun reads term t's postings from a segment's file into r, with
// one pread into buf (reused), not through the mapping, which would map
// the pages around them too (the kernel's fault-around maps 64 KiB for a
// page), and a query reads each term's postings in every segment: a
// rare term's few postings would map a few hundred KiB per segment.
// They are checked against their CRC and the number of notes the first
// time; false if they fail.
func (ix *Index) readRun(t int32, r *run, buf *[]uint64) bool {
	cf := ix.keep
	a, n := int(ix.PostStart[t]), int(ix.PostStart[t+1]-ix.PostStart[t])
	if c := cap(*buf); c < (n*postingSize+7)/8 {
		*buf = slices.Grow((*buf)[:0], (n*postingSize+7)/8)
		osfile.Prefault(osfile.Bytes((*buf)[:cap(*buf)]))
	}
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(*buf))), cap(*buf)*8)[:n*postingSize]
	if _, err := cf.file.ReadAt(raw, cf.off[secPost]+int64(a*postingSize)); err != nil {
		return false
	}
	r.doc, _ = viewOf[int32](raw[:4*n])
	for f := range r.tf {
		r.tf[f], _ = viewOf[uint16](raw[4*n+2*n*f : 4*n+2*n*(f+1)])
	}
	r.docLen = &ix.DocLen
	if ix.checked == nil {
		ix.checked = make([]bool, len(ix.postCRC))
	}
	if ix.checked[t] {
		return true
	}
	if crc32.Checksum(raw, castagnoli) != ix.postCRC[t] {
		return false
	}
	for _, d := range r.doc {
		if d < 0 || int(d) >= ix.N {
			return false
		}
	}
	ix.checked[t] = true
	return true
}

// writeSegment streams a segment file to a temporary file in the
// segment directory, writes the header (size, directory offset) last at
// offset 0 and renames it to a new unique name (writeCacheAtomic), which
// it returns. Segment files are never changed once named.
func writeSegment(ctx context.Context, dir string, src *cacheSource) (string, error) {
	sd, err := mdmem.SafeDir(dir, SegmentDir)
	if err != nil {
		return "", err // a derived cache: never written through a link, inject goes on without it
	}
	if err := os.MkdirAll(sd, 0o755); err != nil {
		return "", err
	}
	name := segmentName()
	err = writeCacheAtomic(ctx, filepath.Join(sd, name), mdmem.PrivateFileMode, func(f *os.File) error {
		var zero [cacheHeader]byte
		if _, err := f.Write(zero[:]); err != nil {
			return err
		}
		h, err := writeCache(f, src)
		if err != nil {
			return err
		}
		_, err = f.WriteAt(h[:], 0)
		return err
	})
	return name, err
}

// writeCacheAtomic replaces path with what fill streams into a temporary
// file beside it, renamed into place: a reader (and a mapping of the old
// file) sees the old file or the new one whole, never a part. Unlike
// mdmem.WriteFileAtomicFunc, which memory files and git's files go
// through, it does not fsync the file or its directory: the index cache
// is derived data that need not survive a crash, and the fsync of the
// 48 MB file at 100k entries took ~45 ms of a one-line update's wall time.
// After a power loss the name may hold the old file (a whole cache of
// the files it was built for: its key decides whether it is used or
// updated), no file, or the new file empty, cut short or with blocks of
// zeros or of other data. Those fail the checks of every open and read
// (size, version, the directory's CRC, each section's, each record's and
// each term's postings' CRC) and are rebuilt from the Markdown with the
// same output (TestCorruptCache: empty, truncated and zeroed files among
// its cases). A crash leaves at most a stray temp file, as mdmem's does.
func writeCacheAtomic(ctx context.Context, path string, perm os.FileMode, fill func(*os.File) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	err = fill(f)
	if err == nil {
		err = f.Chmod(perm)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
