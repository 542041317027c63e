package inject

import (
	"context"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unsafe"

	"github.com/memctl/memctl/mdmem"
)

// lazyNotes are a corpus's notes read in place from the mapped segment
// files of the index cache, one part per segment: the columns a ranking
// scans (flags, session numbers; dates once first needed) joined into one
// array each, and the records and ids decoded from their segment only for
// the notes a query looks at.
type lazyNotes struct {
	parts        []*segNotes
	start        []int // the first note of each part, then n
	n            int
	files        []fileRange
	flags        []uint8
	session      []uint32
	cSec, uSec   []int64
	cNsec, uNsec []uint32
	datesChecked int8 // 0: not yet, 1: good, -1: corrupt
	dups         []int32

	// For the fallback to the Markdown.
	ctx context.Context
	dir string
}

// part returns the segment holding note i and the note's number in it.
func (lz *lazyNotes) part(i int) (*segNotes, int) {
	k := sort.Search(len(lz.parts), func(k int) bool { return lz.start[k+1] > i })
	return lz.parts[k], i - lz.start[k]
}

// note decodes note i, or returns nil if its record is corrupt.
func (lz *lazyNotes) note(i int) *Note {
	p, k := lz.part(i)
	return p.note(k)
}

// id returns note i's id (see segNotes.id).
func (lz *lazyNotes) id(i int) (string, bool) {
	p, k := lz.part(i)
	return p.id(k)
}

// datesOK checks every segment's date columns on first use and joins
// them.
func (lz *lazyNotes) datesOK() bool {
	if lz.datesChecked != 0 {
		return lz.datesChecked > 0
	}
	lz.datesChecked = -1
	for _, p := range lz.parts {
		if !p.datesOK() {
			return false
		}
	}
	lz.cSec, lz.uSec = make([]int64, 0, lz.n), make([]int64, 0, lz.n)
	lz.cNsec, lz.uNsec = make([]uint32, 0, lz.n), make([]uint32, 0, lz.n)
	for _, p := range lz.parts {
		lz.cSec, lz.uSec = append(lz.cSec, p.cSec...), append(lz.uSec, p.uSec...)
		lz.cNsec, lz.uNsec = append(lz.cNsec, p.cNsec...), append(lz.uNsec, p.uNsec...)
	}
	lz.datesChecked = 1
	return true
}

// segNotes are one segment's notes, numbered from 0, viewed in its
// mapping.
type segNotes struct {
	f            *cacheFile
	n            int
	files        []fileRange
	flags        []uint8
	cSec, uSec   []int64
	cNsec, uNsec []uint32
	session      []uint32
	recOff       []uint64
	recCRC       []uint32
	recsLen      uint64
	idOff        []uint32
	ids          []byte
	idsChecked   int8 // 0: not yet, 1: good, -1: corrupt
	datesChecked int8
	memo         map[int32]*Note
}

// note decodes segment note i, or returns nil if its record is corrupt.
func (lz *segNotes) note(i int) *Note {
	if n, ok := lz.memo[int32(i)]; ok {
		return n
	}
	a, b := lz.recOff[i], lz.recOff[i+1]
	if a > b || b > lz.recsLen {
		return nil
	}
	rec := make([]byte, b-a)
	if _, err := lz.f.file.ReadAt(rec, lz.f.off[secRecs]+int64(a)); err != nil {
		return nil
	}
	if crc32.Checksum(rec, castagnoli) != lz.recCRC[i] {
		return nil
	}
	n, ok := decodeRecord(rec)
	if !ok {
		return nil
	}
	lz.memo[int32(i)] = n
	return n
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
		return c.lz.flags[i]
	}
	return flagsOf(&c.notes[i])
}

// place returns note i's place.
func (c *Corpus) place(i int) mdmem.Place {
	if c.lz != nil {
		if k := c.lz.flags[i] & nfPlace; k > 0 && int(k) < len(placeCodes) {
			return placeCodes[k]
		}
	}
	return c.Note(i).Place
}

// hasCreated reports whether note i has a creation date.
func (c *Corpus) hasCreated(i int) bool {
	if c.lz != nil {
		return c.lz.session[i] != 0
	}
	return !c.notes[i].Created.IsZero()
}

// sameSession reports whether notes a and b have a creation date and are
// in one file with one creation time.
func (c *Corpus) sameSession(a, b int) bool {
	if lz := c.lz; lz != nil {
		return lz.session[a] != 0 && lz.session[a] == lz.session[b]
	}
	x, y := &c.notes[a], &c.notes[b]
	return !x.Created.IsZero() && x.File == y.File && x.Created.Equal(y.Created)
}

// date returns note i's Date.
func (c *Corpus) date(i int) time.Time {
	if lz := c.lz; lz != nil && !lz.datesOK() {
		c.fallback()
	}
	if lz := c.lz; lz != nil {
		if lz.uSec[i] != zeroSec || lz.uNsec[i] != 0 {
			return unixTime(lz.uSec[i], lz.uNsec[i])
		}
		return unixTime(lz.cSec[i], lz.cNsec[i])
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
