package consolidate

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/memctl/memctl/mdmem"
)

// matchBase is the part of the matcher's index read from the match cache
// (MatchCacheDir): the entries of the topic files whose segments are
// fresh, looked up in place. Such an entry becomes an item, and its file
// is parsed, only when a lookup returns it (materialize), so a run
// tokenizes the candidates, MEMORY.md, the files without a fresh segment
// and what the lookups return, not the whole memory.
type matchBase struct {
	mem   *mdmem.Memory
	segs  []*segment
	slugs []string // every topic file on disk, sorted
	n     int      // items of all segments
	// minSize is the fewest shingles an item with words holds.
	minSize int
	// entries is how many entries the segments' files hold (the archive
	// limit is a share of every entry of the memory).
	entries int
}

// ordOf is the place of item i of a file of rank r in the order the full
// index holds items (Memory.Docs order, then the planned additions):
// lookups break ties by it.
func ordOf(rank, i int) int64 { return int64(rank)<<32 | int64(i) }

// addOrd is the first order of the items planned in a run.
const addOrd = int64(1) << 62

// openMatchBase loads MEMORY.md and, for each topic file, maps its
// segment when fresh, else parses the file into the memory (stale, to be
// written by writeSegments). ok is false when the cache cannot serve
// (the read view is overlaid by an unfinished write): load everything.
func openMatchBase(ctx context.Context, dir string) (mb *matchBase, stale []string, ok bool, err error) {
	v, err := mdmem.OpenReadView(dir)
	if err != nil {
		return nil, nil, false, err
	}
	overlaid := v.Overlaid()
	slugs, err := v.TopicSlugs()
	v.Close()
	if err != nil || overlaid {
		return nil, nil, false, err
	}
	mem, err := mdmem.LoadMain(ctx, dir)
	if err != nil {
		return nil, nil, false, err
	}
	mb = &matchBase{mem: mem, slugs: slugs}
	for i, slug := range slugs {
		if s := openSegment(dir, slug); s != nil {
			s.rank, s.base = i+1, mb.n
			mb.n += s.nItems
			if s.minSize > 0 && (mb.minSize == 0 || s.minSize < mb.minSize) {
				mb.minSize = s.minSize
			}
			mb.entries += s.nEntries
			mb.segs = append(mb.segs, s)
			continue
		}
		stale = append(stale, slug)
		if err := mem.LoadTopic(ctx, slug); err != nil {
			mb.close()
			return nil, nil, false, err
		}
	}
	if err := mb.checkUniqueIDs(); err != nil {
		mb.close()
		return nil, nil, false, err
	}
	return mb, stale, true, nil
}

// readErr is the first read of a segment that failed.
func (mb *matchBase) readErr() error {
	for _, s := range mb.segs {
		if s.err != nil {
			return s.err
		}
	}
	return nil
}

func (mb *matchBase) close() {
	for _, s := range mb.segs {
		s.close()
	}
}

// rank is a topic file's place in Memory.Docs order.
func (mb *matchBase) rank(slug string) int {
	return 1 + sort.SearchStrings(mb.slugs, slug)
}

// checkUniqueIDs refuses, as Memory.CheckUniqueIDs does, an id held by
// two entries: among the files parsed, and between a parsed file and a
// segment. Two segments were checked against each other when the later
// one was written (its file parsed then); memctl lint and consolidate
// --full check the whole memory.
func (mb *matchBase) checkUniqueIDs() error {
	if err := mb.mem.CheckUniqueIDs(); err != nil {
		return err
	}
	for _, d := range mb.mem.Docs() {
		for _, e := range d.Entries {
			if e.ID == "" {
				continue
			}
			for _, s := range mb.segs {
				if _, ok := s.findID(e.ID); ok {
					p := mdmem.Problem{File: e.File, Line: e.Line, Message: fmt.Sprintf("duplicate id %s (also in %s)", e.ID, mdmem.TopicPath(s.slug))}
					return fmt.Errorf("%s: %s: give one of them a new id by hand (memctl lint lists every problem), then run memctl again", p, "memctl does not write a memory with a duplicated id")
				}
			}
		}
	}
	return nil
}

// seg returns the segment holding base item g and g's index in it.
func (mb *matchBase) seg(g int) (*segment, int) {
	n := mb.segOf(g)
	return mb.segs[n], g - mb.segs[n].base
}

// segOf returns the index in segs of the segment holding base item g.
func (mb *matchBase) segOf(g int) int {
	return sort.Search(len(mb.segs), func(i int) bool { return mb.segs[i].base > g }) - 1
}

// partSuffix matches the "-<n>" of a topic part's slug.
var partSuffixRE = regexp.MustCompile(`^(.*)-([0-9]+)$`)

// loadChain parses the topic file slug and every file of its chain
// (the topic and its parts <slug>-2, -3, …): the editor must see them all
// before it appends to one, or it would write a new file over one.
func (mb *matchBase) loadChain(ctx context.Context, slug string) error {
	root := slug
	if m := partSuffixRE.FindStringSubmatch(slug); m != nil {
		root = m[1]
	}
	for _, s := range mb.slugs {
		if s == root || s == slug {
			if err := mb.load(ctx, s); err != nil {
				return err
			}
			continue
		}
		if m := partSuffixRE.FindStringSubmatch(s); m != nil && m[1] == root {
			if err := mb.load(ctx, s); err != nil {
				return err
			}
		}
	}
	return nil
}

// load parses the topic file slug into the memory. A file with a segment
// must hold, entry for entry, what the segment says (errMatchCache): a
// file the plan reads whole, to edit it or add to it, is the one its
// lookups described.
func (mb *matchBase) load(ctx context.Context, slug string) error {
	if mb.mem.Topics[slug] != nil {
		return nil
	}
	if err := mb.mem.LoadTopic(ctx, slug); err != nil {
		return err
	}
	var s *segment
	for _, c := range mb.segs {
		if c.slug == slug {
			s = c
		}
	}
	if s == nil {
		return nil
	}
	d := mb.mem.Topics[slug]
	if d == nil || len(d.Entries) != s.nEntries {
		return fmt.Errorf("%w: %s changed", errMatchCache, mdmem.TopicPath(slug))
	}
	for i := 0; i < s.nItems; i++ {
		_, _, ei, _, _, _ := s.item(i)
		_, _, _, _, fp, _ := s.loc(i)
		if ei >= len(d.Entries) || entryFingerprint(d.Entries[ei]) != fp {
			return fmt.Errorf("%w: entry %d of %s", errMatchCache, ei, mdmem.TopicPath(slug))
		}
	}
	return nil
}

// findID returns the segment holding an id and its item there (-1: an
// entry the matcher does not index); nil when no segment holds it.
func (mb *matchBase) findID(id string) (*segment, int) {
	for _, s := range mb.segs {
		if it, ok := s.findID(id); ok {
			return s, it
		}
	}
	return nil, -1
}

// idMarks raises st's high-water marks to the largest id numbers of the
// segments' files, as NewIDAllocator does for the entries it reads.
func (mb *matchBase) idMarks(st *mdmem.State) {
	for _, s := range mb.segs {
		s.eachMax(func(p string, n int) {
			if n > st.LastID[p] {
				st.LastID[p] = n
			}
		})
	}
}

// planBase is one plan's view of the match cache: the items it
// materialized, and scratch counters for the lookups.
type planBase struct {
	ctx     context.Context
	mb      *matchBase
	counts  []int32
	touched []int32
	mat     map[int]*item
	// light maps the entries read alone (not from their parsed file) to
	// their base item.
	light map[*mdmem.Entry]int
	// made registers an item materialized (the planner's itemOf).
	made func(*item)
	// err is the first entry that did not match its segment: the plan
	// is refused (errMatchCache) and the run plans on the whole memory.
	err error
}

// errMatchCache says an entry did not match its match-cache segment.
var errMatchCache = fmt.Errorf("match cache does not describe the memory")

func newPlanBase(ctx context.Context, mb *matchBase, made func(*item)) *planBase {
	return &planBase{ctx: ctx, mb: mb, counts: make([]int32, mb.n), mat: map[int]*item{}, light: map[*mdmem.Entry]int{}, made: made}
}

// baseHit is an entry of the match cache a lookup found.
type baseHit struct {
	g   int // its index among the base's items
	ord int64
	j   float64
}

// materialize returns the item of base item g. The entry is read alone
// from its bytes when the segment says it can be (one plain line) and its
// file is not parsed, else from its parsed file; either way it must be
// what the segment says, to its fingerprint (else err is set).
func (b *planBase) materialize(g int) *item {
	if it := b.mat[g]; it != nil {
		return it
	}
	s, i := b.mb.seg(g)
	norm, nsh, ei, cat, scope, place := s.item(i)
	start, end, line, section, fp, light := s.loc(i)
	var e *mdmem.Entry
	if d := b.mb.mem.Topics[s.slug]; d == nil && light {
		le, ok, err := mdmem.ReadTopicEntry(b.mb.mem.Dir, s.slug, start, end, line, section)
		if err != nil || !ok {
			b.fail(fmt.Errorf("%w: entry %d of %s (%v)", errMatchCache, ei, mdmem.TopicPath(s.slug), err))
			return nil
		}
		e = le
		b.light[e] = g
	} else {
		if err := b.mb.load(b.ctx, s.slug); err != nil {
			b.fail(err)
			return nil
		}
		d := b.mb.mem.Topics[s.slug]
		if d == nil || ei >= len(d.Entries) {
			b.fail(fmt.Errorf("%w: %s changed", errMatchCache, mdmem.TopicPath(s.slug)))
			return nil
		}
		e = d.Entries[ei]
	}
	it := newItem(e.Content, e.Category, e.Scope)
	if e.ID == "" || entryFingerprint(e) != fp || hashString(it.norm) != norm || len(it.sh) != nsh || it.cat != s.str(cat) || it.scope != s.str(scope) || string(e.Place) != s.str(place) {
		b.fail(fmt.Errorf("%w: entry %d of %s", errMatchCache, ei, mdmem.TopicPath(s.slug)))
		return nil
	}
	it.entry, it.ord = e, ordOf(s.rank, i)
	b.mat[g] = it
	b.made(it)
	return it
}

// parsed returns the entry of its parsed file that the entry e read alone
// stands for, parsing the file (e itself when it was read with its file):
// the editor edits parsed files only. It must be e to its fingerprint.
func (b *planBase) parsed(e *mdmem.Entry) (*mdmem.Entry, error) {
	g, ok := b.light[e]
	if !ok {
		return e, nil
	}
	s, i := b.mb.seg(g)
	_, _, ei, _, _, _ := s.item(i)
	if err := b.mb.load(b.ctx, s.slug); err != nil {
		return nil, err
	}
	d := b.mb.mem.Topics[s.slug]
	if d == nil || ei >= len(d.Entries) || entryFingerprint(d.Entries[ei]) != entryFingerprint(e) {
		return nil, fmt.Errorf("%w: entry %d of %s", errMatchCache, ei, mdmem.TopicPath(s.slug))
	}
	delete(b.light, e)
	return d.Entries[ei], nil
}

func (b *planBase) fail(err error) {
	if b.err == nil {
		b.err = err
	}
}

// exact returns the base items whose normalised text may be q's (the
// same hash) in q's scope, in index order.
func (b *planBase) exact(q *item) []baseHit {
	if q.norm == "" {
		return nil
	}
	h := hashString(q.norm)
	var out []baseHit
	for _, s := range b.mb.segs {
		for _, i := range s.exact(h) {
			if _, _, _, _, scope, _ := s.item(i); s.str(scope) == q.scope {
				out = append(out, baseHit{g: s.base + i, ord: ordOf(s.rank, i)})
			}
		}
	}
	return out
}

// accept materializes a base hit and returns its item when it is in q's
// scope and ok accepts it.
func (b *planBase) accept(h baseHit, q *item, ok func(*item) bool) *item {
	it := b.materialize(h.g)
	if it == nil || it.scope != q.scope || !ok(it) {
		return nil
	}
	return it
}

// df is how many base items hold shingle h.
func (b *planBase) df(h uint64) int {
	n := 0
	for _, s := range b.mb.segs {
		from, to := s.postings(h)
		n += to - from
	}
	return n
}

// liveCounts adds the base's live entries per category and scope.
func (b *planBase) liveCounts(m map[string]int) {
	for _, s := range b.mb.segs {
		s.eachLive(func(cat, scope, place string, n int) {
			if live(mdmem.Place(place)) {
				m[cat+"\x00"+scope] += n
			}
		})
	}
}

// shingle is one of a query's shingles with its postings in each
// segment and how many items hold it.
type shingle struct {
	spans [][2]int
	df    int
}

// bound is the best similarity to a query of n shingles that an item
// holding none of them but r can have: it shares at most r, and holds at
// least minSize (Jaccard: shared / (n + held - shared)).
func bound(n, r, minSize int) float64 {
	if r <= 0 {
		return 0
	}
	return float64(r) / float64(n+max(minSize, r)-r)
}

// best merges into its, js (the in-memory index's best, in order) the
// base items most similar to q at or above min that ok accepts, and
// returns the k best. Entries pre refuses are not materialized.
//
// It is exact without counting every posting of q's common shingles: it
// counts the postings of the rarest first, and stops when an item it has
// not met, holding at most the shingles left, can neither reach min nor
// beat the k-th best so far (bound); the items it met are then scored
// in full, the shingles left looked up in their postings. The result is
// the one counting every posting gives (TestBoundedLookup).
func (b *planBase) best(q *item, min float64, k int, ok func(*item) bool, pre func(cat, scope string, place mdmem.Place) bool, its []*item, js []float64) ([]*item, []float64) {
	n := len(q.sh)
	toks := make([]shingle, n)
	for t, h := range q.sh {
		toks[t].spans = make([][2]int, len(b.mb.segs))
		for si, s := range b.mb.segs {
			from, to := s.postings(h)
			toks[t].spans[si] = [2]int{from, to}
			toks[t].df += to - from
		}
	}
	sort.SliceStable(toks, func(i, j int) bool { return toks[i].df < toks[j].df })
	touched := b.touched[:0]
	sel := &baseSelect{b: b, q: q, min: min, k: k, ok: ok, pre: pre, its: its, js: js}
	m := 0
	for ; m < n; m++ {
		r := n - m
		if bound(n, r, b.mb.minSize) < min {
			break
		}
		if m > 0 && toks[m].df > len(touched) {
			// Counting this shingle costs more than scoring the items
			// met: see whether they settle the k best.
			b.touched = touched
			if th, full := sel.kth(sel.choose(b.scored(touched, toks[m:], n))); full && bound(n, r, b.mb.minSize) < th {
				break
			}
		}
		for si, s := range b.mb.segs {
			sp := toks[m].spans[si]
			if sp[1] == sp[0] {
				continue
			}
			post := s.postItems(sp[0], sp[1])
			for p := 0; p < len(post); p += 4 {
				g := s.base + int(le32(post, p))
				if b.counts[g] == 0 {
					touched = append(touched, int32(g))
				}
				b.counts[g]++
			}
		}
	}
	b.touched = touched
	cands := sel.choose(b.scored(touched, toks[m:], n))
	for _, g := range touched {
		b.counts[g] = 0
	}
	return sel.merge(cands)
}

// scored returns the items met with their similarity to a query of n
// shingles: the shingles counted, and those of rest each holds.
func (b *planBase) scored(touched []int32, rest []shingle, n int) []baseHit {
	out := make([]baseHit, len(touched))
	for x, g32 := range touched {
		g := int(g32)
		si := b.mb.segOf(g)
		s := b.mb.segs[si]
		i := g - s.base
		nsh := s.shingles(i)
		inter := int(b.counts[g])
		for _, t := range rest {
			if sp := t.spans[si]; sp[1] > sp[0] && s.holds(sp[0], sp[1], i) {
				inter++
			}
		}
		out[x] = baseHit{g: g, ord: ordOf(s.rank, i), j: float64(inter) / float64(n+nsh-inter)}
	}
	return out
}

// baseSelect picks a lookup's best base items among scored ones.
type baseSelect struct {
	b        *planBase
	q        *item
	min      float64
	k        int
	ok       func(*item) bool
	pre      func(cat, scope string, place mdmem.Place) bool
	its      []*item
	js       []float64
	rejected map[int]bool
	pass     map[*segment]map[[3]uint32]bool
}

func better(a, c baseHit) bool { return a.j > c.j || a.j == c.j && a.ord < c.ord }

// choose returns the best scored items at or above min that pre and ok
// accept, in order, at most k; it materializes them (and rejects for
// good those ok refuses).
func (sel *baseSelect) choose(hits []baseHit) []baseHit {
	b := sel.b
	if sel.rejected == nil {
		sel.rejected, sel.pass = map[int]bool{}, map[*segment]map[[3]uint32]bool{}
	}
	var cands []baseHit
	for want := sel.k; ; want *= 4 {
		cands = cands[:0]
		for _, h := range hits {
			if h.j < sel.min || sel.rejected[h.g] || len(cands) == want && !better(h, cands[want-1]) {
				continue
			}
			s, i := b.mb.seg(h.g)
			_, _, _, cat, scope, place := s.item(i)
			m := [3]uint32{cat, scope, place}
			pm := sel.pass[s]
			if pm == nil {
				pm = map[[3]uint32]bool{}
				sel.pass[s] = pm
			}
			okm, seen := pm[m]
			if !seen {
				okm = s.str(scope) == sel.q.scope && sel.pre(s.str(cat), s.str(scope), mdmem.Place(s.str(place)))
				pm[m] = okm
			}
			if !okm {
				continue
			}
			if it := b.mat[h.g]; it != nil && !sel.ok(it) {
				continue
			}
			at := sort.Search(len(cands), func(n int) bool { return better(h, cands[n]) })
			if len(cands) < want {
				cands = append(cands, baseHit{})
			}
			copy(cands[at+1:], cands[at:len(cands)-1])
			cands[at] = h
		}
		accepted := 0
		for _, h := range cands {
			if b.accept(h, sel.q, sel.ok) == nil {
				sel.rejected[h.g] = true
				if b.err != nil {
					break
				}
				continue
			}
			accepted++
		}
		if accepted >= sel.k || len(cands) < want || b.err != nil {
			break
		}
	}
	out := cands[:0]
	for _, h := range cands {
		if !sel.rejected[h.g] && b.mat[h.g] != nil && len(out) < sel.k {
			out = append(out, h)
		}
	}
	return out
}

// kth returns the score of the k-th best of the merged lists, and
// whether there are k.
func (sel *baseSelect) kth(cands []baseHit) (float64, bool) {
	_, js := sel.merge(cands)
	if len(js) < sel.k {
		return 0, false
	}
	return js[sel.k-1], true
}

// merge merges the chosen base items with the in-memory index's best
// (both in order) and returns the k best.
func (sel *baseSelect) merge(cands []baseHit) ([]*item, []float64) {
	its, js, k := sel.its, sel.js, sel.k
	var outI []*item
	var outJ []float64
	n := 0
	for _, h := range cands {
		it := sel.b.mat[h.g]
		for n < len(its) && (js[n] > h.j || js[n] == h.j && its[n].ord < h.ord) && len(outI) < k {
			outI, outJ = append(outI, its[n]), append(outJ, js[n])
			n++
		}
		if len(outI) >= k {
			break
		}
		outI, outJ = append(outI, it), append(outJ, h.j)
	}
	for ; n < len(its) && len(outI) < k; n++ {
		outI, outJ = append(outI, its[n]), append(outJ, js[n])
	}
	return outI, outJ
}

// cached reports whether a topic file's entries are the base's (it has a
// fresh segment), parsed or not.
func (mb *matchBase) cached(slug string) bool {
	for _, s := range mb.segs {
		if s.slug == slug {
			return true
		}
	}
	return false
}

// loadedEntries is how many entries the parsed files with a segment
// hold (counted in entries too).
func (mb *matchBase) loadedEntries() int {
	n := 0
	for _, s := range mb.segs {
		if d := mb.mem.Topics[s.slug]; d != nil {
			n += len(d.Entries)
		}
	}
	return n
}

// checkCreated refuses a plan that writes a topic file the run did not
// read while one is on disk: the editor took it for a new file.
func (mb *matchBase) checkCreated(files map[string][]byte) error {
	for p := range files {
		if p == mdmem.MainFile || mb.mem.Doc(p) != nil || !strings.HasPrefix(p, mdmem.TopicDir+"/") {
			continue
		}
		if _, err := os.Lstat(filepath.Join(mb.mem.Dir, filepath.FromSlash(p))); err == nil {
			return fmt.Errorf("%w: %s written without being read", errPlanInvariant, p)
		}
	}
	return nil
}
