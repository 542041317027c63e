package inject

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/memctl/memctl/mdmem"
	"github.com/memctl/memctl/mdmem/osfile"
)

// SegmentDir is the memory-relative directory of the index cache's
// segment files: each holds the notes, index and token counts of a run of
// consecutive memory files (one file, or small files packed together up
// to segmentTarget bytes of Markdown), in the layout cache.go describes.
// A segment is written once under a new name and never changed; the
// manifest (IndexCacheFile) says which segments make up the memory.
const SegmentDir = mdmem.IndexSegmentsDir

func segmentDir(dir string) string { return filepath.Join(dir, filepath.FromSlash(SegmentDir)) }

// segmentName returns a new unique segment file name.
func segmentName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:]) + ".seg"
}

// segmentTarget: consecutive changed files are packed into one segment
// until it holds this much Markdown, so that many small topic files do
// not each cost a file open on every read. (A variable: tests give each
// file a segment of its own.)
var segmentTarget int64 = 256 << 10

// manifestMagic starts the manifest, with the format version.
const manifestMagic = "memctl-index-v8\n"

// fileKey identifies one memory file's version: any write changes its
// size, mtime or ctime, and a replacement by rename changes its inode. A
// file whose mtime or ctime is within racyWindow of the manifest's write
// (or later) is "racy": a second write in the same timestamp tick could
// leave all four unchanged, so its content hash is kept too, until a
// later run finds the file unchanged and old enough to drop it.
type fileKey struct {
	Path               string
	Size, Mtime, Ctime int64
	Ino                uint64
	Hash               []byte // SHA-256 of the content, racy files only
}

// racyWindow is the memory's caches' racy window (mdmem.RacyWindow).
const racyWindow = mdmem.RacyWindow

// racy reports whether a write in the same timestamp tick as k's could
// go unseen by a cache written at ref (Unix nanoseconds).
func (k fileKey) racy(ref int64) bool {
	limit := ref - int64(racyWindow)
	return k.Size >= 0 && (k.Mtime >= limit || k.Ctime >= limit)
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

// memoryFile is one memory file in note order: MEMORY.md, then the topic
// files by slug (as readCorpus reads them).
type memoryFile struct{ path, slug string }

func memoryFiles(v *mdmem.ReadView) ([]memoryFile, error) {
	slugs, err := v.TopicSlugs()
	if err != nil {
		return nil, err
	}
	files := []memoryFile{{path: mdmem.MainFile}}
	for _, s := range slugs {
		files = append(files, memoryFile{path: mdmem.TopicPath(s), slug: s})
	}
	return files, nil
}

// statKeys stats the memory files (Size -1: missing).
func statKeys(dir string, files []memoryFile) ([]fileKey, error) {
	keys := make([]fileKey, 0, len(files))
	for _, f := range files {
		fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(f.path)))
		if errors.Is(err, os.ErrNotExist) {
			keys = append(keys, fileKey{Path: f.path, Size: -1})
			continue
		}
		if err != nil {
			return nil, err
		}
		k := fileKey{Path: f.path, Size: fi.Size(), Mtime: fi.ModTime().UnixNano()}
		k.Ino, k.Ctime = osfile.InodeAndCtime(fi)
		keys = append(keys, k)
	}
	return keys, nil
}

func hashFile(dir, rel string) ([]byte, error) {
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, err
	}
	s := sha256.Sum256(data)
	return s[:], nil
}

// manifest is the index cache's table of contents: every memory file's
// key in note order, the segments that cover them in order (each the
// next Files files), and the notes whose id another note has too (over
// all segments: duplicate-id warnings need only those).
type manifest struct {
	files []fileKey
	segs  []segmentRef
	dups  []int32
}

// segmentRef names a segment file, how many memory files it covers and
// how many notes it holds, and the stamp of the file as it was when its
// checked sections last passed their CRCs (zero: none).
type segmentRef struct {
	Name         string
	Files, Notes int
	Checked      segStamp
}

// segStamp identifies one version of a segment file: any write to it
// changes its ctime (which no one can set), and a replacement its inode.
// A segment whose stamp is recorded in the manifest passed its checks
// whole as that file, and its checked sections are not checked again
// while its stamp is the same; the stamp is recorded only once the
// file's ctime is racyWindow older than the check, so that a write in
// the same timestamp tick as the segment's own cannot go unseen. The
// postings and records keep their checks on first use.
type segStamp struct {
	Size, Ctime int64
	Ino         uint64
}

// stampable reports whether a segment checked whole at ref (Unix
// nanoseconds) may record st.
func (st segStamp) stampable(ref int64) bool {
	return st.Size > 0 && st.Ctime < ref-int64(racyWindow)
}

// encode lays the manifest out: magic, varint fields, CRC-32C.
func (m *manifest) encode() []byte {
	b := []byte(manifestMagic)
	b = binary.AppendUvarint(b, uint64(len(m.files)))
	for _, k := range m.files {
		b = appendString(b, k.Path)
		b = binary.AppendVarint(b, k.Size)
		b = binary.AppendVarint(b, k.Mtime)
		b = binary.AppendVarint(b, k.Ctime)
		b = binary.AppendUvarint(b, k.Ino)
		b = appendString(b, string(k.Hash))
	}
	b = binary.AppendUvarint(b, uint64(len(m.segs)))
	for _, s := range m.segs {
		b = appendString(b, s.Name)
		b = binary.AppendUvarint(b, uint64(s.Files))
		b = binary.AppendUvarint(b, uint64(s.Notes))
		b = binary.AppendVarint(b, s.Checked.Size)
		b = binary.AppendVarint(b, s.Checked.Ctime)
		b = binary.AppendUvarint(b, s.Checked.Ino)
	}
	b = binary.AppendUvarint(b, uint64(len(m.dups)))
	for _, d := range m.dups {
		b = binary.AppendUvarint(b, uint64(d))
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// readManifest reads and checks the manifest; nil when it is missing,
// of another version, corrupt, or does not fit together.
func readManifest(dir string) *manifest {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(IndexCacheFile)))
	if err != nil || len(b) < len(manifestMagic)+4 || string(b[:len(manifestMagic)]) != manifestMagic {
		return nil
	}
	body := b[:len(b)-4]
	if crc32.Checksum(body, castagnoli) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
		return nil
	}
	r := &cacheReader{b: body, p: len(manifestMagic)}
	m := &manifest{files: make([]fileKey, r.count(6))}
	for i := range m.files {
		m.files[i] = fileKey{Path: r.str(), Size: r.varint(), Mtime: r.varint(), Ctime: r.varint(), Ino: r.uvarint(), Hash: []byte(r.str())}
		if len(m.files[i].Hash) == 0 {
			m.files[i].Hash = nil
		}
	}
	m.segs = make([]segmentRef, r.count(5))
	covered := 0
	for i := range m.segs {
		name, files, notes := r.str(), r.uvarint(), r.uvarint()
		if files > math.MaxInt32 || notes > math.MaxInt32 {
			return nil
		}
		m.segs[i] = segmentRef{Name: name, Files: int(files), Notes: int(notes),
			Checked: segStamp{Size: r.varint(), Ctime: r.varint(), Ino: r.uvarint()}}
		s := m.segs[i]
		if s.Files < 1 || s.Files > len(m.files)-covered || s.Name != filepath.Base(s.Name) || !strings.HasSuffix(s.Name, ".seg") {
			return nil
		}
		covered += s.Files
	}
	m.dups = make([]int32, r.count(1))
	for i := range m.dups {
		m.dups[i] = int32(r.uvarint())
	}
	if r.err != nil || r.p != len(body) || covered != len(m.files) {
		return nil
	}
	return m
}

// segment is one segment file read in place: its files' keys, notes,
// topics, token counts and index, its notes numbered from 0.
type segment struct {
	name    string
	stamp   segStamp // the file's, when opened
	trusted bool     // its checked sections were not checked: stamp is the manifest's
	key     []fileKey
	notes   *segNotes
	topics  []TopicInfo
	tok     *tokTable
	ix      *Index
}

// loadSegment opens a segment and checks it; nil if it fails. Its
// checked sections are not checked again when the file's stamp is
// checked, the one the manifest recorded (zero: none). Token table heads
// are decoded through heads (shared by one load's segments).
func loadSegment(ctx context.Context, dir, name string, heads *tokHeads, checked segStamp) *segment {
	cf, err := openSegment(ctx, filepath.Join(segmentDir(dir), name))
	if err != nil {
		return nil
	}
	trusted := checked.Size > 0 && checked == cf.stamp
	sg, err := cf.segment(heads, trusted)
	if err != nil {
		return nil
	}
	sg.name, sg.stamp, sg.trusted = name, cf.stamp, trusted
	return sg
}

// tokenizerFits reports whether a segment's token counts serve cnt: any
// table when cnt is not set (the caller counts nothing), else the counts
// for cnt when it is a BPE tokenizer (others are not tabled).
func tokenizerFits(t *tokTable, cnt Counter) bool {
	if cnt == nil {
		return true
	}
	if _, ok := cnt.(*bpeCounter); !ok {
		return true
	}
	return t != nil && t.name == cnt.Name()
}

var errUncachable = errors.New("index cache: the memory cannot be cached now")

// loadSegments reads the memory through the index cache: the segments
// whose files' keys (and recorded content hashes) match are used in
// place; the files of the others, and files no segment covers, are
// parsed and written to new segments; the manifest is rewritten when
// anything changed or a recorded hash can be dropped. errUncachable (or
// another error) sends the caller to the Markdown.
func loadSegments(ctx context.Context, v *mdmem.ReadView, dir string, cnt Counter) (*Corpus, error) {
	start := time.Now()
	files, err := memoryFiles(v)
	if err != nil {
		return nil, err
	}
	key, err := statKeys(dir, files)
	if err != nil {
		return nil, err
	}
	old := readManifest(dir)
	l := &segmentLoad{ctx: ctx, v: v, dir: dir, cnt: cnt, files: files, key: key,
		at: make([]*segment, len(key)), hashes: make([][]byte, len(key))}
	// The kept segments are opened, and the replaced ones read for their
	// counts, while the changed files are parsed into new ones; the files
	// of a kept segment that fails its checks are parsed after.
	kept := l.keep(old)
	l.replacedRead = make(chan struct{})
	go l.readReplaced()
	opened := make(chan []*segment, 1)
	go func() { opened <- l.open(kept) }()
	err = l.build()
	if l.place(kept, <-opened) && err == nil {
		err = l.build()
	}
	<-l.replacedRead // sameIDs reads them
	if err != nil {
		return nil, err
	}
	var segs []*segment
	for _, sg := range l.at {
		if sg != nil {
			segs = append(segs, sg)
		}
	}
	var dups []int32 // nil: joinSegments finds them
	if old != nil && !l.changed {
		dups = old.dups
	} else if old != nil {
		dups = l.sameIDs(old, segs)
	}
	c, err := joinSegments(ctx, dir, segs, dups)
	if err != nil {
		return nil, err
	}
	if l.changed || l.droppable(start, segs) {
		l.writeManifest(start, segs, c.lz.dups, old)
	}
	return c, nil
}

// segmentLoad is the state of one loadSegments.
type segmentLoad struct {
	ctx      context.Context
	v        *mdmem.ReadView
	dir      string
	cnt      Counter
	files    []memoryFile
	key      []fileKey
	at       []*segment // the segment starting at each file, if any
	covered  []bool
	hashes   [][]byte // per file: its content's hash, when known (checked or read)
	changed  bool     // a segment was written or dropped
	prior    *tokTable
	counted  map[string]lineCount // the replaced segments' notes' counts, by their records
	replaced []*segment           // the old manifest's segments not kept, that could be read
	// toReplace are the old manifest's segments not kept; readReplaced
	// reads them into replaced, prior and counted, then closes
	// replacedRead.
	toReplace    []segmentRef
	replacedRead chan struct{}
	heads        tokHeads // the segments' token table heads, each decoded once
}

// keptSegment is a segment of the old manifest whose files' keys (and
// recorded content hashes) still match: kept if it opens and passes its
// checks (segmentLoad.open).
type keptSegment struct {
	name    string
	at      int       // its first file
	key     []fileKey // its files' keys
	checked segStamp  // the manifest's stamp of it
}

// keep finds the old manifest's segments that still hold their files as
// they are, and marks their files covered; the others' token counts are
// kept for the update (addPrior).
func (l *segmentLoad) keep(old *manifest) []keptSegment {
	l.covered = make([]bool, len(l.key))
	if old == nil {
		l.changed = true
		return nil
	}
	pos := map[string]int{}
	for i, k := range l.key {
		pos[k.Path] = i
	}
	var kept []keptSegment
	next := 0
	for _, ref := range old.segs {
		fk := old.files[next : next+ref.Files]
		next += ref.Files
		at, ok := pos[fk[0].Path]
		ok = ok && at+len(fk) <= len(l.key) && sameKey(fk, l.key[at:at+len(fk)]) && !l.anyCovered(at, len(fk))
		for j := 0; ok && j < len(fk); j++ {
			if len(fk[j].Hash) > 0 {
				h, err := hashFile(l.dir, fk[j].Path)
				ok = err == nil && bytes.Equal(h, fk[j].Hash)
				l.hashes[at+j] = h
			}
		}
		if !ok {
			l.changed = true
			l.toReplace = append(l.toReplace, ref)
			continue
		}
		kept = append(kept, keptSegment{name: ref.Name, at: at, key: fk, checked: ref.Checked})
		for j := range fk {
			l.covered[at+j] = true
		}
	}
	if next != len(old.files) || len(old.files) != len(l.key) {
		l.changed = true
	}
	return kept
}

// open opens the kept segments, a few at a time, each checked: built for
// its files' keys and, when the caller counts tokens, holding that
// tokenizer's counts. It returns each one, or nil for one that fails.
// It only reads l.
func (l *segmentLoad) open(kept []keptSegment) []*segment {
	out := make([]*segment, len(kept))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), 4) {
		wg.Go(func() {
			for k := int(next.Add(1)) - 1; k < len(kept); k = int(next.Add(1)) - 1 {
				sg := loadSegment(l.ctx, l.dir, kept[k].name, &l.heads, kept[k].checked)
				if sg != nil && sameKey(sg.key, kept[k].key) && tokenizerFits(sg.tok, l.cnt) {
					out[k] = sg
				}
			}
		})
	}
	wg.Wait()
	return out
}

// place puts the opened kept segments at their files; the files of one
// that failed are no longer covered (build parses them). It reports
// whether any failed.
func (l *segmentLoad) place(kept []keptSegment, opened []*segment) bool {
	failed := false
	for k, sg := range opened {
		if sg != nil {
			l.at[kept[k].at] = sg
			continue
		}
		failed, l.changed = true, true
		for j := range kept[k].key {
			l.covered[kept[k].at+j] = false
		}
	}
	return failed
}

func (l *segmentLoad) anyCovered(at, n int) bool {
	for _, c := range l.covered[at : at+n] {
		if c {
			return true
		}
	}
	return false
}

// readReplaced reads the old manifest's segments keep did not keep, in
// order, for their chunk counts and ids (addPrior, sameIDs); it runs while
// the changed files are read and parsed, and closes l.replacedRead.
func (l *segmentLoad) readReplaced() {
	defer close(l.replacedRead)
	for _, ref := range l.toReplace {
		if sg := loadSegment(l.ctx, l.dir, ref.Name, &l.heads, ref.Checked); sg != nil {
			l.addPrior(sg)
			l.replaced = append(l.replaced, sg)
		}
	}
}

// addPrior keeps a replaced segment's token counts (fixed strings, digits,
// chunks) for counting the new segments' lines without the tokenizer.
func (l *segmentLoad) addPrior(sg *segment) {
	if sg == nil || sg.tok == nil || l.cnt == nil || sg.tok.name != l.cnt.Name() || !sg.notes.f.verify(secTokPieces) {
		return
	}
	pieces, err := sg.notes.f.pieces()
	if err != nil {
		return
	}
	if l.prior == nil {
		l.prior = &tokTable{name: sg.tok.name, consts: map[string]int{}, digits: sg.tok.digits, pieces: map[string]uint32{}}
	}
	for s, k := range sg.tok.consts {
		l.prior.consts[s] = k
	}
	for s, k := range pieces {
		if len(l.prior.pieces) < maxPieceMemo {
			l.prior.pieces[s] = k
		}
	}
	recs, ok := sg.notes.records()
	if !ok {
		return
	}
	if l.counted == nil {
		l.counted = make(map[string]lineCount, min(sg.notes.n, maxPieceMemo))
	}
	for i := 0; i < sg.notes.n && len(l.counted) < maxPieceMemo; i++ {
		l.counted[recs[sg.notes.recOff[i]:sg.notes.recOff[i+1]]] = lineCount{sg.tok.line[i], sg.tok.ref[i]}
	}
}

// lineCount is a note's token counts: its line's and its footer ref's.
type lineCount struct {
	line uint16
	ref  uint8
}

// build parses the files no kept segment covers, packing runs of
// consecutive ones into new segments.
func (l *segmentLoad) build() error {
	for i := 0; i < len(l.key); {
		if l.covered[i] {
			i++
			continue
		}
		j, size := i, int64(0)
		for j < len(l.key) && !l.covered[j] && (j == i || size+max(l.key[j].Size, 0) <= segmentTarget) {
			size += max(l.key[j].Size, 0)
			j++
		}
		sg, err := l.buildSegment(i, j)
		if err != nil {
			return err
		}
		l.at[i] = sg
		l.changed = true
		i = j
	}
	return nil
}

// buildSegment parses files [i, j) and writes their segment.
func (l *segmentLoad) buildSegment(i, j int) (*segment, error) {
	c := &Corpus{}
	for k := i; k < j; k++ {
		if err := l.ctx.Err(); err != nil {
			return nil, err
		}
		f := l.files[k]
		src, err := l.v.ReadFile(f.path)
		if err != nil && !(f.slug == "" && errors.Is(err, fs.ErrNotExist)) {
			return nil, err
		}
		h := sha256.Sum256(src)
		l.hashes[k] = h[:]
		d := mdmem.ParseDoc(f.path, src)
		c.addDoc(d)
		if f.slug != "" {
			c.Topics = append(c.Topics, topicInfo(f.slug, d))
		}
	}
	if len(c.conflicts) > 0 {
		return nil, errUncachable // read from the Markdown every time, so the markers are reported
	}
	c.init()
	// The index only reads the notes: it is built while the token counts
	// and the notes' sections are written.
	built := make(chan *Index, 1)
	go func() { built <- buildIndex(c, Rankers[DefaultRanker].An) }()
	<-l.replacedRead // the replaced segments' counts
	c.tok = segmentTokens(c, l.cnt, l.prior, l.counted)
	name, err := writeSegment(l.ctx, l.dir, corpusSource(l.key[i:j], c, func() *Index { return <-built }))
	if err != nil {
		return nil, err
	}
	sg := loadSegment(l.ctx, l.dir, name, &l.heads, segStamp{})
	if sg == nil {
		return nil, errUncachable
	}
	return sg, nil
}

// segmentTokens counts a new segment's lines for cnt: from the segments
// it replaces when there are any (a note whose record is one of theirs,
// byte for byte, has their counts; another is counted from their chunk
// counts, and a chunk none of them had leaves its line's count unknown,
// 0, so that a one-line edit never loads the tokenizer; inject counts
// such a line itself if it prints it), else with the tokenizer.
func segmentTokens(c *Corpus, cnt Counter, prior *tokTable, counted map[string]lineCount) *tokTable {
	if cnt == nil {
		return nil
	}
	if prior == nil {
		return buildTokTable(c, cnt)
	}
	if _, ok := cnt.(*bpeCounter); !ok {
		return nil
	}
	n := c.Len()
	t := &tokTable{name: prior.name, consts: map[string]int{}, digits: prior.digits, pieces: prior.pieces,
		line: make([]uint16, n), ref: make([]uint8, n)}
	for _, s := range constStrings(c) {
		if k, ok := prior.consts[s]; ok {
			t.consts[s] = k
		}
	}
	for l := 1; l <= 3; l++ { // the digit runs' counts are known too
		for v := 0; v < [...]int{0, 10, 100, 1000}[l]; v++ {
			d := fmt.Sprintf("%0*d", l, v)
			if _, ok := prior.pieces[d]; !ok && prior.digits[digitIndex(d)] > 0 {
				prior.pieces[d] = uint32(prior.digits[digitIndex(d)])
			}
		}
	}
	pc := &pieceCounter{cnt: cnt, memo: prior.pieces, knownOnly: true}
	var line, rec []byte
	for i := 0; i < n; i++ {
		nt := c.Note(i)
		rec = appendRecord(rec[:0], nt)
		if k, ok := counted[string(rec)]; ok {
			t.line[i], t.ref[i] = k.line, k.ref
			continue
		}
		line = t.count(pc, i, nt, line)
	}
	return t
}

// droppable reports whether the manifest is worth rewriting though
// nothing changed: a recorded content hash may be dropped now (its file
// is no longer racy), or a segment checked whole this run may record its
// stamp (the checks are repeated against the manifest's own write time
// when it is written).
func (l *segmentLoad) droppable(start time.Time, segs []*segment) bool {
	for i, k := range l.key {
		if l.hashes[i] != nil && !k.racy(start.UnixNano()) {
			return true
		}
	}
	for _, sg := range segs {
		if !sg.trusted && sg.stamp.stampable(start.UnixNano()) {
			return true
		}
	}
	return false
}

// writeManifest writes the manifest for the segments (temp file,
// rename), unless the memory files changed since they were stat'ed, then
// removes the segments it no longer names. A file is racy against the
// earlier of the run's start and the temp file's mtime (the file system's
// clock): its hash is recorded, from the bytes parsed or checked this run.
func (l *segmentLoad) writeManifest(start time.Time, segs []*segment, dups []int32, old *manifest) {
	m := &manifest{files: make([]fileKey, len(l.key)), dups: dups}
	p := filepath.Join(l.dir, filepath.FromSlash(IndexCacheFile))
	err := writeCacheAtomic(l.ctx, p, mdmem.PrivateFileMode, func(f *os.File) error {
		ref := start.UnixNano()
		if fi, err := f.Stat(); err == nil {
			ref = min(ref, fi.ModTime().UnixNano())
		}
		for _, sg := range segs {
			sr := segmentRef{Name: sg.name, Files: len(sg.key), Notes: sg.notes.n}
			if sg.trusted || sg.stamp.stampable(ref) { // checked whole this run, or as this file before
				sr.Checked = sg.stamp
			}
			m.segs = append(m.segs, sr)
		}
		for i, k := range l.key {
			k.Hash = nil
			if k.racy(ref) {
				if l.hashes[i] == nil {
					return errUncachable // kept without a hash: written before its segment's manifest yet racy now (a clock step)
				}
				k.Hash = l.hashes[i]
			}
			m.files[i] = k
		}
		after, err := statKeys(l.dir, l.files)
		if err != nil || !sameKey(after, l.key) {
			return errUncachable
		}
		if files, err := memoryFiles(l.v); err != nil || len(files) != len(l.files) {
			return errUncachable
		}
		_, err = f.Write(m.encode())
		return err
	})
	if err != nil {
		return
	}
	l.removeUnused(old, m)
}

// removeUnused removes the segments the old manifest named and the new
// one does not, and segment files no manifest named that are older than
// a minute (left by a run that was killed or lost a race).
func (l *segmentLoad) removeUnused(old, m *manifest) {
	used := map[string]bool{}
	for _, s := range m.segs {
		used[s.Name] = true
	}
	if old != nil {
		for _, s := range old.segs {
			if !used[s.Name] {
				_ = os.Remove(filepath.Join(segmentDir(l.dir), s.Name))
				used[s.Name] = true
			}
		}
	}
	ents, err := os.ReadDir(segmentDir(l.dir))
	if err != nil {
		return
	}
	for _, e := range ents {
		if used[e.Name()] {
			continue
		}
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > time.Minute {
			_ = os.Remove(filepath.Join(segmentDir(l.dir), e.Name()))
		}
	}
}

// sameIDs returns the notes with a shared id after an update whose new
// segments hold, all together, the same ids (as a multiset) as the old
// segments they replace, as a hand edit of an entry's text does: then
// the ids more than one note has are the same as before, and the notes
// that have one are the kept segments' of the old manifest (renumbered)
// and the new segments' notes with one of the replaced notes' shared
// ids. Nil when that does not hold or a segment cannot be read.
func (l *segmentLoad) sameIDs(old *manifest, segs []*segment) []int32 {
	type span struct{ start, n int }
	was := map[string]span{} // the old segments, by name
	at := 0
	for _, ref := range old.segs {
		was[ref.Name] = span{at, ref.Notes}
		at += ref.Notes
	}
	isNew := map[*segment]bool{}
	var before, after []string // the replaced and the new segments' ids
	ids := func(sg *segment, out []string) ([]string, bool) {
		for i := 0; i < sg.notes.n; i++ {
			id, ok := sg.notes.id(i)
			if !ok {
				return nil, false
			}
			if id != "" {
				out = append(out, id)
			}
		}
		return out, true
	}
	kept := 0
	var ok bool
	for _, sg := range segs {
		if w, in := was[sg.name]; in && w.n == sg.notes.n {
			kept++
			continue
		}
		isNew[sg] = true
		if after, ok = ids(sg, after); !ok {
			return nil
		}
	}
	if kept+len(l.replaced) != len(old.segs) {
		return nil // a replaced segment could not be read
	}
	for _, sg := range l.replaced {
		if w, in := was[sg.name]; !in || w.n != sg.notes.n {
			return nil
		}
		if before, ok = ids(sg, before); !ok {
			return nil
		}
	}
	if !slices.Equal(before, after) {
		before, after = slices.Clone(before), slices.Clone(after)
		slices.Sort(before)
		slices.Sort(after)
		if !slices.Equal(before, after) {
			return nil
		}
	}
	// The old shared ids of the replaced segments' notes, and the kept
	// segments' notes renumbered.
	shared := map[string]bool{}
	moved := map[string]int{} // the kept segments' new first notes
	start := 0
	for _, sg := range segs {
		if !isNew[sg] {
			moved[sg.name] = start
		}
		start += sg.notes.n
	}
	var out []int32
	for _, sg := range l.replaced {
		w := was[sg.name]
		for _, d := range old.dups {
			if int(d) >= w.start && int(d) < w.start+w.n {
				id, _ := sg.notes.id(int(d) - w.start)
				shared[id] = true
			}
		}
	}
	for _, ref := range old.segs {
		w := was[ref.Name]
		to, in := moved[ref.Name]
		if !in {
			continue
		}
		for _, d := range old.dups {
			if int(d) >= w.start && int(d) < w.start+w.n {
				out = append(out, int32(to+int(d)-w.start))
			}
		}
	}
	start = 0
	for _, sg := range segs {
		if isNew[sg] && len(shared) > 0 {
			for i := 0; i < sg.notes.n; i++ {
				if id, _ := sg.notes.id(i); shared[id] {
					out = append(out, int32(start+i))
				}
			}
		}
		start += sg.notes.n
	}
	slices.Sort(out)
	if out == nil {
		out = []int32{}
	}
	return out
}

// joinSegments makes one corpus of the segments in order, read in place:
// the notes' parts (lazyNotes), the indexes joined (joinIndexes), the token tables joined
// when every segment has one for one tokenizer. Nothing per note is
// copied. dups are the manifest's notes with a shared id, or nil to find
// them.
func joinSegments(ctx context.Context, dir string, segs []*segment, dups []int32) (*Corpus, error) {
	lz := &lazyNotes{ctx: ctx, dir: dir, start: []int{0}}
	var parts []indexPart
	for _, sg := range segs {
		lz.parts = append(lz.parts, sg.notes)
		parts = append(parts, indexPart{ix: sg.ix, start: int32(lz.n)})
		lz.n += sg.notes.n
		lz.start = append(lz.start, lz.n)
	}
	ix, ok := joinIndexes(parts)
	if !ok {
		return nil, errCorrupt
	}
	if dups == nil {
		var ok bool
		if dups, ok = lz.sharedIDs(); !ok {
			return nil, errCorrupt
		}
	}
	for k, d := range dups {
		if d < 0 || int(d) >= lz.n || k > 0 && d <= dups[k-1] {
			return nil, errCorrupt
		}
	}
	lz.dups = dups
	c := &Corpus{lz: lz, tok: joinTokens(segs, lz.start)}
	for _, sg := range segs {
		c.Topics = append(c.Topics, sg.topics...)
	}
	c.init()
	c.indexes[ix.An.key()] = ix
	return c, ctx.Err()
}

// joinTokens joins the segments' token tables (start: each one's first
// note, then the number of notes), their per-note counts read from each
// in place: nil unless all have one for the same tokenizer.
func joinTokens(segs []*segment, start []int) *tokTable {
	var t *tokTable
	shared := false // t.consts is a segment's (never written)
	for _, sg := range segs {
		st := sg.tok
		if st == nil || t != nil && st.name != t.name {
			return nil
		}
		switch {
		case t == nil:
			t = &tokTable{name: st.name, consts: st.consts, digits: st.digits, start: start}
			shared = true
		case sameMap(st.consts, t.consts):
		default:
			if shared {
				t.consts, shared = maps.Clone(t.consts), false
			}
			maps.Copy(t.consts, st.consts)
		}
		t.parts = append(t.parts, st)
	}
	return t
}

// sameMap reports whether a and b are the same map (not equal contents).
func sameMap(a, b map[string]int) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}
