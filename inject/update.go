package inject

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math"
	"slices"
	"sort"

	"github.com/memctl/memctl/mdmem"
)

// updateCache brings an intact but stale cache up to date: the memory
// files whose key is unchanged keep their notes (records, columns, ids
// and token counts copied as stored, never decoded), their postings
// (renumbered) and their topics' front matter; only the changed, added
// and removed files are read and analysed again, and their postings
// merged in. The cache is then written whole (atomically, as a rebuild
// writes it) and the corpus read from it in place. It returns nil when
// it cannot (the old cache fails a check, was built for another
// tokenizer or analyzer, or the files changed meanwhile): the caller then
// rebuilds from the Markdown.
func updateCache(ctx context.Context, v *mdmem.ReadView, dir string, old *cacheFile, key []fileKey, cnt Counter) *Corpus {
	u, err := newUpdate(ctx, v, dir, old, key, cnt)
	if err != nil || !writeCacheFile(ctx, dir, key, u.source(key)) {
		return nil
	}
	cf, err := openCache(ctx, dir)
	if err != nil {
		return nil
	}
	c, err := cf.corpus(ctx, dir)
	if err != nil {
		return nil
	}
	return c
}

var errNoUpdate = errors.New("index cache: rebuild")

// cacheUpdate is the new cache's content: old notes by reference, new
// notes parsed.
type cacheUpdate struct {
	old      *cacheFile
	oldIx    *Index
	recOff   []uint64
	recCRC   []uint32
	idOff    []uint32
	flags    []uint8
	cSec     []int64
	cNsec    []uint32
	uSec     []int64
	uNsec    []uint32
	files    []fileRange
	topics   []TopicInfo
	n        int
	from     []int32 // per new note: its old note, or -1 - its index in fresh
	fresh    *Corpus // the notes of the files read again
	tok      *tokTable
	ix       *Index
	dups     []int32
	runs     []mergeRun
	pairs    [][2]int32 // per merged term: its old and fresh term ids (-1: none)
	fx       *Index     // the fresh notes' index
	freshOf  []int32    // per fresh note: its new note
	oldToNew []int32    // per old note: its new note, or -1 (its file changed)
}

// newUpdate checks the old cache, finds the files whose key is
// unchanged, reads the others again and merges the index, the ids that
// are shared and the token counts.
func newUpdate(ctx context.Context, v *mdmem.ReadView, dir string, old *cacheFile, key []fileKey, cnt Counter) (*cacheUpdate, error) {
	oldKey, oc, oix, err := checkOld(ctx, dir, old, cnt)
	if err != nil {
		return nil, err
	}
	lz := oc.lz
	u := &cacheUpdate{old: old, oldIx: oix, recOff: lz.recOff, recCRC: lz.recCRC, idOff: lz.idOff, flags: lz.flags,
		cSec: lz.cSec, cNsec: lz.cNsec, uSec: lz.uSec, uNsec: lz.uNsec, fresh: &Corpus{}}
	if !offsetsOK(lz) {
		return nil, errNoUpdate
	}
	same := keptFiles(dir, oldKey, key)
	if err := u.readFiles(ctx, v, oc, same); err != nil {
		return nil, err
	}
	u.fresh.init()
	if u.ix, err = u.mergeIndex(); err != nil {
		return nil, err
	}
	u.dups = u.sharedIDs(lz)
	if cnt != nil {
		pieces, err := old.pieces()
		if err != nil {
			return nil, err
		}
		u.tok = u.mergeTokens(oc.tok, pieces, cnt)
	}
	return u, nil
}

// checkOld checks what of the old cache an update reads (what is copied
// as it is, the note records with their CRCs, is checked when read) and
// returns its key, its corpus and its index, every term's postings
// checked; errNoUpdate when it was built for another tokenizer.
func checkOld(ctx context.Context, dir string, old *cacheFile, cnt Counter) ([]fileKey, *Corpus, *Index, error) {
	for s := range old.sec {
		if !perItem(s) && !old.verify(s) {
			return nil, nil, nil, errNoUpdate
		}
	}
	oldKey, err := old.key()
	if err != nil {
		return nil, nil, nil, err
	}
	oc, err := old.corpus(ctx, dir)
	if err != nil {
		return nil, nil, nil, err
	}
	oix := oc.indexes[Rankers[DefaultRanker].An.key()]
	if oix == nil || (cnt == nil) != (oc.tok == nil) || cnt != nil && oc.tok.name != cnt.Name() {
		return nil, nil, nil, errNoUpdate
	}
	oix.checked = make([]bool, len(oix.postCRC))
	for t := range oix.postCRC {
		if !oix.termOK(int32(t)) {
			return nil, nil, nil, errNoUpdate
		}
	}
	return oldKey, oc, oix, nil
}

// offsetsOK checks that the old ids' and records' offsets start at 0,
// end at their sections' ends and never decrease.
func offsetsOK(lz *lazyNotes) bool {
	if lz.idOff[0] != 0 || int(lz.idOff[lz.n]) != len(lz.ids) || lz.recOff[0] != 0 || lz.recOff[lz.n] != lz.recsLen {
		return false
	}
	for k := 0; k < lz.n; k++ {
		if lz.idOff[k] > lz.idOff[k+1] || lz.recOff[k] > lz.recOff[k+1] {
			return false
		}
	}
	return true
}

// keptFiles returns the files that are as they were: present, with the
// same stat key and, for those the old key hashed, the same content.
func keptFiles(dir string, oldKey, key []fileKey) map[string]bool {
	was := map[string]fileKey{}
	for _, k := range oldKey {
		was[k.Path] = k
	}
	same := map[string]bool{}
	for _, k := range key {
		ok, found := was[k.Path]
		if !found || !sameKey([]fileKey{ok}, []fileKey{k}) || k.Size < 0 {
			continue
		}
		if len(ok.Hash) > 0 {
			h, err := hashFile(dir, k.Path)
			if err != nil || string(h) != string(ok.Hash) {
				continue
			}
		}
		same[k.Path] = true
	}
	return same
}

// readFiles lays out the new notes file by file, in note order as
// readCorpus reads them: a kept file's notes refer to the old ones (its
// topic's front matter is kept too), the other files are parsed again
// into u.fresh.
func (u *cacheUpdate) readFiles(ctx context.Context, v *mdmem.ReadView, oc *Corpus, same map[string]bool) error {
	lz := oc.lz
	oldFiles := map[string]fileRange{}
	for _, f := range lz.files {
		oldFiles[f.Path] = f
	}
	oldTopics := map[string]TopicInfo{}
	for _, t := range oc.Topics {
		oldTopics[t.Slug] = t
	}
	slugs, err := v.TopicSlugs()
	if err != nil {
		return err
	}
	paths := []string{mdmem.MainFile}
	for _, s := range slugs {
		paths = append(paths, mdmem.TopicPath(s))
	}
	u.oldToNew = make([]int32, lz.n)
	for i := range u.oldToNew {
		u.oldToNew[i] = -1
	}
	var freshTopics []TopicInfo
	for k, p := range paths {
		if err := ctx.Err(); err != nil {
			return err
		}
		start := u.n
		t, kept := TopicInfo{}, same[p]
		if k > 0 {
			t, kept = oldTopics[slugs[k-1]]
			kept = kept && same[p]
		}
		if kept {
			u.keepFile(oldFiles, p)
		} else {
			d, err := u.parseFile(v, p, k == 0)
			if err != nil {
				return err
			}
			if k > 0 {
				t = topicInfo(slugs[k-1], d)
				freshTopics = append(freshTopics, t)
			}
		}
		if k > 0 {
			u.topics = append(u.topics, t)
		}
		if u.n > start {
			u.files = append(u.files, fileRange{Path: p, Start: start, Count: u.n - start})
		}
	}
	u.fresh.Topics = freshTopics
	return nil
}

// keepFile appends the old notes of kept file p (none if it had none).
func (u *cacheUpdate) keepFile(oldFiles map[string]fileRange, p string) {
	f, ok := oldFiles[p]
	if !ok {
		return
	}
	for i := f.Start; i < f.Start+f.Count; i++ {
		u.oldToNew[i] = int32(len(u.from))
		u.from = append(u.from, int32(i))
	}
	u.n += f.Count
}

// parseFile reads file p again and appends its notes as fresh ones; a
// missing main file (main) has none.
func (u *cacheUpdate) parseFile(v *mdmem.ReadView, p string, main bool) (*mdmem.Doc, error) {
	src, err := v.ReadFile(p)
	if err != nil && (!main || !errors.Is(err, fs.ErrNotExist)) {
		return nil, err
	}
	d := mdmem.ParseDoc(p, src)
	if len(d.Conflicts) > 0 {
		return nil, errNoUpdate // read whole, and not cached, while a merge is unfinished
	}
	for _, e := range d.Entries {
		u.freshOf = append(u.freshOf, int32(len(u.from)))
		u.from = append(u.from, int32(-1-len(u.fresh.notes)))
		u.fresh.notes = append(u.fresh.notes, noteOf(e))
	}
	u.n += len(d.Entries)
	return d, nil
}

// mergeIndex merges the old postings of the kept notes (renumbered) with
// those of the fresh notes, term by term in sorted order.
func (u *cacheUpdate) mergeIndex() (*Index, error) {
	o := u.oldIx
	an := Rankers[DefaultRanker].An
	fx := buildIndex(u.fresh, an)
	ix := &Index{An: an, N: u.n}
	for f := range ix.DocLen {
		ix.DocLen[f] = make([]uint16, u.n)
		ix.total[f] = o.total[f] + fx.total[f]
	}
	for i, from := range u.from {
		for f := range ix.DocLen {
			if from >= 0 {
				ix.DocLen[f][i] = o.DocLen[f][from]
			} else {
				ix.DocLen[f][i] = fx.DocLen[f][-1-from]
			}
		}
	}
	for d, to := range u.oldToNew {
		if to >= 0 {
			continue
		}
		for f := range ix.DocLen {
			l := o.DocLen[f][d]
			if l == math.MaxUint16 || uint64(l) > ix.total[f] {
				return nil, errNoUpdate // saturated: its true length is not known
			}
			ix.total[f] -= uint64(l)
		}
	}
	for _, d := range o.PostDoc {
		if d < 0 || int(d) >= len(u.oldToNew) {
			return nil, errNoUpdate
		}
	}
	fterms := make([]string, 0, len(fx.Terms))
	for t := range fx.Terms {
		fterms = append(fterms, t)
	}
	sort.Strings(fterms)
	nOld := len(o.termID)
	// The new notes as runs: kept notes with consecutive old numbers
	// (their postings are copied, renumbered by one shift), or fresh.
	for i := 0; i < len(u.from); {
		from := u.from[i]
		r := mergeRun{fresh: from < 0, oldLo: from, shift: int32(i) - from}
		k := i + 1
		for k < len(u.from) && (r.fresh && u.from[k] < 0 || !r.fresh && u.from[k] == from+int32(k-i)) {
			k++
		}
		r.oldHi, r.newHi = from+int32(k-i), int32(k)
		u.runs = append(u.runs, r)
		i = k
	}
	u.fx = fx
	ix.termOff = []int32{0}
	ix.PostStart = []int32{0}
	add := func(term string, oid, fid int32) {
		n := int32(0)
		u.spans(oid, fid, func(_ mergeRun, lo, hi int32) { n += hi - lo })
		if n == 0 {
			return // no note has it any more
		}
		ix.termBlob = append(ix.termBlob, term...)
		ix.termOff = append(ix.termOff, int32(len(ix.termBlob)))
		ix.termID = append(ix.termID, int32(len(ix.termID)))
		ix.PostStart = append(ix.PostStart, ix.PostStart[len(ix.PostStart)-1]+n)
		u.pairs = append(u.pairs, [2]int32{oid, fid})
	}
	i, j := 0, 0
	for i < nOld || j < len(fterms) {
		var ot string
		if i < nOld {
			ot = string(o.termBlob[o.termOff[i]:o.termOff[i+1]])
		}
		switch {
		case j == len(fterms) || i < nOld && ot < fterms[j]:
			add(ot, o.termID[i], -1)
			i++
		case i == nOld || fterms[j] < ot:
			add(fterms[j], -1, fx.Terms[fterms[j]])
			j++
		default:
			add(ot, o.termID[i], fx.Terms[fterms[j]])
			i++
			j++
		}
	}
	return ix, nil
}

// mergeRun is a run of new notes: kept notes with consecutive old numbers,
// or fresh ones.
type mergeRun struct {
	fresh        bool
	oldLo, oldHi int32 // kept: old notes [oldLo, oldHi)
	shift, newHi int32 // kept: new = old + shift; fresh: new notes below newHi
}

// spans calls fn, in new note order, with the postings of the merged term
// (old term oid, fresh term fid; -1: none) that each run holds: a range
// of the old postings for a kept run, of the fresh ones for a fresh run.
func (u *cacheUpdate) spans(oid, fid int32, fn func(r mergeRun, lo, hi int32)) {
	o, fx := u.oldIx, u.fx
	var a, b, c, d int32
	if oid >= 0 {
		a, b = o.PostStart[oid], o.PostStart[oid+1]
	}
	if fid >= 0 {
		c, d = fx.PostStart[fid], fx.PostStart[fid+1]
	}
	for _, r := range u.runs {
		if r.fresh {
			lo := c
			for c < d && u.freshOf[fx.PostDoc[c]] < r.newHi {
				c++
			}
			if c > lo {
				fn(r, lo, c)
			}
			continue
		}
		if a == b {
			continue
		}
		docs := o.PostDoc[a:b]
		lo := a + int32(sort.Search(len(docs), func(k int) bool { return docs[k] >= r.oldLo }))
		docs = o.PostDoc[lo:b]
		hi := lo + int32(sort.Search(len(docs), func(k int) bool { return docs[k] >= r.oldHi }))
		if hi > lo {
			fn(r, lo, hi)
		}
		a = hi
	}
}

// docs appends merged term t's notes, little-endian (postingSource).
func (u *cacheUpdate) docs(b []byte, t int32) []byte {
	u.spans(u.pairs[t][0], u.pairs[t][1], func(r mergeRun, lo, hi int32) {
		if r.fresh {
			for _, d := range u.fx.PostDoc[lo:hi] {
				b = binary.LittleEndian.AppendUint32(b, uint32(u.freshOf[d]))
			}
			return
		}
		for _, d := range u.oldIx.PostDoc[lo:hi] {
			b = binary.LittleEndian.AppendUint32(b, uint32(d+r.shift))
		}
	})
	return b
}

// tf appends merged term t's frequencies in field f (postingSource).
func (u *cacheUpdate) tf(b []byte, f int, t int32) []byte {
	u.spans(u.pairs[t][0], u.pairs[t][1], func(r mergeRun, lo, hi int32) {
		if r.fresh {
			b = append(b, leBytes(u.fx.PostTF[f][lo:hi])...)
		} else {
			b = append(b, leBytes(u.oldIx.PostTF[f][lo:hi])...)
		}
	})
	return b
}

// sharedIDs finds the new notes whose id another has too without a map
// of every id: they are among the kept notes that shared an id before,
// the fresh notes and the kept notes with a fresh note's id.
func (u *cacheUpdate) sharedIDs(lz *lazyNotes) []int32 {
	freshIDs := map[string]bool{}
	for k := range u.fresh.notes {
		if id := u.fresh.notes[k].ID; id != "" {
			freshIDs[id] = true
		}
	}
	in := map[int32]bool{}
	for _, d := range lz.dups {
		if to := u.oldToNew[d]; to >= 0 {
			in[to] = true
		}
	}
	if len(freshIDs) > 0 {
		for d, to := range u.oldToNew {
			if to >= 0 && freshIDs[bytesView(lz.ids[lz.idOff[d]:lz.idOff[d+1]])] {
				in[to] = true
			}
		}
	}
	for _, to := range u.freshOf {
		in[to] = true
	}
	cand := make([]int32, 0, len(in))
	for d := range in {
		cand = append(cand, d)
	}
	slices.Sort(cand)
	shared := sharedIDs(len(cand), func(k int) string { return u.id(lz, cand[k]) })
	out := make([]int32, len(shared))
	for k, c := range shared {
		out[k] = cand[c]
	}
	return out
}

// id returns new note i's id.
func (u *cacheUpdate) id(lz *lazyNotes, i int32) string {
	if from := u.from[i]; from >= 0 {
		return bytesView(lz.ids[lz.idOff[from]:lz.idOff[from+1]])
	}
	return u.fresh.notes[-1-u.from[i]].ID
}

// mergeTokens keeps the kept notes' counts and counts the fresh ones,
// from the old table's chunk counts where it can: a line made of known
// words does not load the tokenizer (which costs more than the rest of a
// one-line update).
func (u *cacheUpdate) mergeTokens(ot *tokTable, pieces map[string]uint32, cnt Counter) *tokTable {
	t := &tokTable{name: ot.name, consts: make(map[string]int, len(ot.consts)), digits: ot.digits,
		line: make([]uint16, u.n), ref: make([]uint8, u.n)}
	for s, k := range ot.consts {
		t.consts[s] = k
	}
	for i, from := range u.from {
		if from >= 0 {
			t.line[i], t.ref[i] = ot.line[from], ot.ref[from]
		}
	}
	for l := 1; l <= 3; l++ { // the digit runs' counts are known too
		for v := 0; v < [...]int{0, 10, 100, 1000}[l]; v++ {
			d := fmt.Sprintf("%0*d", l, v)
			if k := ot.digits[digitIndex(d)]; k > 0 && !hasPiece(pieces, d) {
				pieces[d] = uint32(k)
			}
		}
	}
	pc := &pieceCounter{cnt: cnt, memo: pieces}
	t.pieces = pieces
	var line []byte
	for k := range u.fresh.notes {
		n := &u.fresh.notes[k]
		line = t.count(pc, int(u.freshOf[k]), n, line)
		for _, stale := range []bool{false, true} {
			if s := groupSuffix(n.Source, stale); !hasKey(t.consts, s) {
				t.consts[s] = cnt.Count(s)
			}
		}
	}
	return t
}

func hasKey(m map[string]int, k string) bool { _, ok := m[k]; return ok }

func hasPiece(m map[string]uint32, k string) bool { _, ok := m[k]; return ok }

// keptRun returns the run of kept notes with consecutive old numbers
// that starts at new note i: its length (0 if note i is fresh) and its
// first old note.
func (u *cacheUpdate) keptRun(i int) (k, from int) {
	f := u.from[i]
	if f < 0 {
		return 0, 0
	}
	for k = 1; i+k < len(u.from) && u.from[i+k] == f+int32(k); k++ {
	}
	return k, int(f)
}

// source writes the update.
func (u *cacheUpdate) source(key []fileKey) *cacheSource {
	o := u.old
	recs, ids := o.sec[secRecs], o.sec[secIDs]
	kept := &keptRecords{file: o.file, base: o.off[secRecs], off: u.recOff, crc: u.recCRC, run: u.keptRun}
	return &cacheSource{
		key: key, files: u.files, topics: u.topics, n: u.n, tok: u.tok, ix: u.ix, dups: u.dups, post: u, kept: kept,
		meta: func(i int) noteMeta {
			if from := u.from[i]; from >= 0 {
				return noteMeta{flags: u.flags[from], cSec: u.cSec[from], cNsec: u.cNsec[from], uSec: u.uSec[from], uNsec: u.uNsec[from]}
			}
			return metaOf(&u.fresh.notes[-1-u.from[i]])
		},
		id: func(i int) string {
			if from := u.from[i]; from >= 0 {
				return bytesView(ids[u.idOff[from]:u.idOff[from+1]]) // valid while old is mapped
			}
			return u.fresh.notes[-1-u.from[i]].ID
		},
		record: func(b []byte, i int) ([]byte, uint32) {
			if from := u.from[i]; from >= 0 {
				return append(b, recs[u.recOff[from]:u.recOff[from+1]]...), u.recCRC[from]
			}
			rec := appendRecord(b, &u.fresh.notes[-1-u.from[i]])
			return rec, crc32.Checksum(rec[len(b):], castagnoli)
		},
	}
}
