package inject

import (
	"context"
	"encoding/binary"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/memctl/memctl/mdmem"
)

// lazyNotes are a corpus's notes read in place from the mapped segment
// files of the index cache, one part per segment, nothing joined: the
// columns a ranking scans (flags, session numbers, dates) are read from
// the part holding a note, and the records and ids decoded from it only
// for the notes a query looks at.
type lazyNotes struct {
	parts []*segNotes
	start []int // the first note of each part, then n
	cur   int   // the part the last note looked up was in
	n     int
	dups  []int32

	// For the fallback to the Markdown.
	ctx context.Context
	dir string
}

// part returns the part holding note i and the note's number in it.
// Notes are mostly looked up in order: the last part found is tried
// first.
func (lz *lazyNotes) part(i int) (int, int) {
	if k := lz.cur; i >= lz.start[k] && i < lz.start[k+1] {
		return k, i - lz.start[k]
	}
	return lz.find(i)
}

func (lz *lazyNotes) find(i int) (int, int) {
	k := sort.Search(len(lz.parts), func(k int) bool { return lz.start[k+1] > i })
	lz.cur = k
	return k, i - lz.start[k]
}

// note decodes note i, or returns nil if its record is corrupt.
func (lz *lazyNotes) note(i int) *Note {
	k, j := lz.part(i)
	return lz.parts[k].note(j)
}

// id returns note i's id (see segNotes.id).
func (lz *lazyNotes) id(i int) (string, bool) {
	k, j := lz.part(i)
	return lz.parts[k].id(j)
}

// flags returns note i's flags.
func (lz *lazyNotes) flags(i int) uint8 {
	k, j := lz.part(i)
	return lz.parts[k].flags[j]
}

// date returns note i's Date, or false if its part's dates are corrupt
// (each part's checked on first use).
func (lz *lazyNotes) date(i int) (time.Time, bool) {
	k, j := lz.part(i)
	p := lz.parts[k]
	if !p.datesOK() {
		return time.Time{}, false
	}
	if p.uSec[j] != zeroSec || p.uNsec[j] != 0 {
		return unixTime(p.uSec[j], p.uNsec[j]), true
	}
	return unixTime(p.cSec[j], p.cNsec[j]), true
}

// segNotes are one segment's notes, numbered from 0, viewed in its
// mapping.
type segNotes struct {
	f            *cacheFile
	n            int
	flags        []uint8
	cSec, uSec   []int64
	cNsec, uNsec []uint32
	session      []uint32
	recOff       []uint64
	recCRC       []uint32
	recsLen      uint64
	idOff        []uint32
	ids          []byte
	idHash       []uint64 // sorted, of the notes with an id
	idNote       []int32  // the note of each idHash
	idsChecked   int8     // 0: not yet, 1: good, -1: corrupt
	datesChecked int8
	memo         map[int32]*Note
}

// note decodes segment note i, or returns nil if its record is corrupt.
func (lz *segNotes) note(i int) *Note {
	if n, ok := lz.memo[int32(i)]; ok {
		return n
	}
	// Its offsets and CRC are read (pread) too: viewed in the mapping,
	// each would map the 64 KiB around it.
	var at [20]byte
	if _, err := lz.f.file.ReadAt(at[:16], lz.f.off[secRecOff]+8*int64(i)); err != nil {
		return nil
	}
	if _, err := lz.f.file.ReadAt(at[16:], lz.f.off[secRecCRC]+4*int64(i)); err != nil {
		return nil
	}
	a, b := binary.LittleEndian.Uint64(at[:]), binary.LittleEndian.Uint64(at[8:])
	if a > b || b > lz.recsLen {
		return nil
	}
	rec := make([]byte, b-a)
	if _, err := lz.f.file.ReadAt(rec, lz.f.off[secRecs]+int64(a)); err != nil {
		return nil
	}
	if crc32.Checksum(rec, castagnoli) != binary.LittleEndian.Uint32(at[16:]) {
		return nil
	}
	n, ok := decodeRecord(rec)
	if !ok {
		return nil
	}
	lz.memo[int32(i)] = n
	return n
}

// records reads every note record of the segment (one read), each
// checked against its CRC: note i's is [recOff[i], recOff[i+1]). False if
// one fails.
func (lz *segNotes) records() (string, bool) {
	b := make([]byte, lz.recsLen)
	if _, err := lz.f.file.ReadAt(b, lz.f.off[secRecs]); err != nil {
		return "", false
	}
	for i := 0; i < lz.n; i++ {
		a, e := lz.recOff[i], lz.recOff[i+1]
		if a > e || e > lz.recsLen || crc32.Checksum(b[a:e], castagnoli) != lz.recCRC[i] {
			return "", false
		}
	}
	return bytesView(b), true
}

// id returns segment note i's id, viewed in the mapping (valid while the corpus
// is), or false if the ids are corrupt.
func (lz *segNotes) id(i int) (string, bool) {
	if lz.idsChecked == 0 {
		lz.idsChecked = -1
		if lz.f.verify(secIDOff) && lz.f.verify(secIDs) && lz.idOff[0] == 0 && int(lz.idOff[lz.n]) == len(lz.ids) {
			lz.idsChecked = 1
			for k := 0; k < lz.n; k++ {
				if lz.idOff[k] > lz.idOff[k+1] {
					lz.idsChecked = -1
					break
				}
			}
		}
	}
	if lz.idsChecked < 0 {
		return "", false
	}
	return bytesView(lz.ids[lz.idOff[i]:lz.idOff[i+1]]), true
}

// idHashesOK checks the id hashes (once per call: they are read only
// when an update finds the shared ids again).
func (lz *segNotes) idHashesOK() bool {
	if !lz.f.verify(secIDHash) || !lz.f.verify(secIDNote) || len(lz.idNote) != len(lz.idHash) {
		return false
	}
	for k, d := range lz.idNote {
		if d < 0 || int(d) >= lz.n || k > 0 && lz.idHash[k] < lz.idHash[k-1] {
			return false
		}
	}
	return true
}

// sharedIDs lists, in file order, the notes whose id another note has
// too, from each part's sorted id hashes: merging them finds the notes
// whose hashes are equal, and their ids decide. It reads no id of a note
// whose hash no other note has. False if a part is corrupt.
func (lz *lazyNotes) sharedIDs() ([]int32, bool) {
	// A winner tree over the parts: win[1] is the part with the least
	// next hash, win[m+k] is part k (padding parts are done).
	m := 1
	for m < len(lz.parts) {
		m *= 2
	}
	pos, key, done := make([]int, m), make([]uint64, m), make([]bool, m)
	for k := range done {
		if k >= len(lz.parts) {
			done[k] = true
			continue
		}
		p := lz.parts[k]
		if !p.idHashesOK() {
			return nil, false
		}
		if done[k] = len(p.idHash) == 0; !done[k] {
			key[k] = p.idHash[0]
		}
	}
	better := func(a, b int) int {
		if done[b] || !done[a] && key[a] <= key[b] {
			return a
		}
		return b
	}
	win := make([]int, 2*m)
	for k := range m {
		win[m+k] = k
	}
	for i := m - 1; i >= 1; i-- {
		win[i] = better(win[2*i], win[2*i+1])
	}
	type at struct{ k, i int } // hash i of part k
	var out []int32
	var group []at
	bad := false
	for !done[win[1]] {
		x := key[win[1]]
		group = group[:0]
		for k := win[1]; !done[k] && key[k] == x; k = win[1] {
			group = append(group, at{k, pos[k]})
			hs := lz.parts[k].idHash
			if pos[k]++; pos[k] < len(hs) {
				key[k] = hs[pos[k]]
			} else {
				done[k] = true
			}
			for i := (m + k) / 2; i >= 1; i /= 2 {
				win[i] = better(win[2*i], win[2*i+1])
			}
		}
		if len(group) < 2 {
			continue
		}
		note := func(j int) int32 {
			g := group[j]
			return int32(lz.start[g.k]) + lz.parts[g.k].idNote[g.i]
		}
		for _, j := range sharedIDs(len(group), func(j int) string {
			id, ok := lz.id(int(note(j)))
			bad = bad || !ok
			return id
		}) {
			out = append(out, note(int(j)))
		}
	}
	slices.Sort(out)
	return out, !bad
}

// bytesView returns b as a string without copying: b must not change
// while the string is used.
func bytesView(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

var zeroSec = time.Time{}.Unix()

func unixTime(sec int64, nsec uint32) time.Time {
	if sec == zeroSec && nsec == 0 {
		return time.Time{}
	}
	return time.Unix(sec, int64(nsec)).UTC()
}

// Len is the number of notes.
func (c *Corpus) Len() int {
	if c.lz != nil {
		return c.lz.n
	}
	return len(c.notes)
}

// Note returns note i, 0 <= i < Len(), in file order. A corpus read from
// the index cache decodes it on first use.
func (c *Corpus) Note(i int) *Note {
	if c.lz != nil {
		if n := c.lz.note(i); n != nil {
			return n
		}
		c.fallback()
	}
	return &c.notes[i]
}

// Ref returns note i's Ref.
func (c *Corpus) Ref(i int) string {
	if id := c.id(i); id != "" {
		return strings.Clone(id)
	}
	return c.Note(i).Ref()
}

// id returns note i's id (from the cache: valid while c is).
func (c *Corpus) id(i int) string {
	if c.lz != nil {
		if s, ok := c.lz.id(i); ok {
			return s
		}
		c.fallback()
	}
	return c.notes[i].ID
}

// flags returns note i's flags (noteMeta).
func (c *Corpus) flags(i int) uint8 {
	if c.lz != nil {
		return c.lz.flags(i)
	}
	return flagsOf(&c.notes[i])
}

// place returns note i's place.
func (c *Corpus) place(i int) mdmem.Place {
	if c.lz != nil {
		if k := c.lz.flags(i) & nfPlace; k > 0 && int(k) < len(placeCodes) {
			return placeCodes[k]
		}
	}
	return c.Note(i).Place
}

// date returns note i's Date.
func (c *Corpus) date(i int) time.Time {
	if lz := c.lz; lz != nil {
		if t, ok := lz.date(i); ok {
			return t
		}
		c.fallback()
	}
	return c.notes[i].Date()
}

// sharedIDs lists the notes whose id another note has too, in file order.
func (c *Corpus) sharedIDs() []int32 {
	if c.lz != nil {
		return c.lz.dups
	}
	return sharedIDs(len(c.notes), func(i int) string { return c.notes[i].ID })
}

// datesOK checks the date columns on first use.
func (lz *segNotes) datesOK() bool {
	if lz.datesChecked == 0 {
		lz.datesChecked = 1
		for s := secCreatedSec; s <= secUpdatedNsec; s++ {
			if !lz.f.verify(s) {
				lz.datesChecked = -1
			}
		}
	}
	return lz.datesChecked > 0
}

// fallback replaces the notes and index read from a cache found corrupt
// after it was opened by the notes parsed from the Markdown (the cache's
// key matched, so they are the same notes in the same order), and removes
// the cache so that the next run rebuilds it. If the memory cannot be
// read now, the notes are left empty rather than stopping the caller.
func (c *Corpus) fallback() {
	lz := c.lz
	c.lz = nil
	_ = os.Remove(filepath.Join(lz.dir, filepath.FromSlash(IndexCacheFile)))
	var notes []Note
	c.Topics = nil
	if v, err := mdmem.OpenReadView(lz.dir); err == nil {
		if fresh, err := readCorpus(lz.ctx, v, lz.dir); err == nil {
			notes, c.Topics = fresh.notes, fresh.Topics
		}
		v.Close()
	}
	if len(notes) != lz.n {
		// The memory changed since the cache was opened: keep the
		// number of notes the caller has seen.
		notes = append(make([]Note, 0, lz.n), notes[:min(len(notes), lz.n)]...)
		notes = notes[:lz.n]
	}
	c.notes, c.tok = notes, nil
	c.init()
}
