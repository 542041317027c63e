package inject

import (
	"fmt"
	"iter"
	"math"
	"sort"
	"strings"

	"github.com/memctl/memctl/mdmem/osfile"
)

// Fields of the BM25F index.
const (
	fieldContent = iota // the entry's text
	fieldTopic          // topic slug, front matter description and keywords; core section
	fieldTags           // tags and category
	nFields
)

// Index is an inverted index over a corpus's notes, in compressed sparse
// row form so it can be cached as flat arrays. An index joined from the
// cache's segments has none of the arrays: it reads each segment's.
type Index struct {
	An        Analyzer
	Terms     map[string]int32  // term → id; nil when read from the cache (see lookup)
	PostStart []int32           // postings of term t: [PostStart[t], PostStart[t+1])
	PostDoc   []int32           // note index
	PostTF    [nFields][]uint16 // term frequency per field, aligned with PostDoc
	DocLen    [nFields][]uint16 // field lengths in terms, per note
	AvgLen    [nFields]float64
	N         int

	// From the cache: the terms sorted, as offsets into termBlob, with
	// their ids.
	termOff  []int32
	termID   []int32
	termBlob []byte

	total   [nFields]uint64 // field lengths summed over the notes
	postCRC []uint32        // from a segment: CRC-32C of each term's postings
	checked []bool          // terms whose postings readRun checked
	keep    *cacheFile      // the mapping the arrays view

	// From the cache's segments (joinIndexes): each segment's index, read
	// in place, and the terms looked up so far (-1: in no segment) with,
	// by id, their id in each segment and their document frequency (the
	// sum of the segments'). A ranking reads each segment's postings where
	// they are (runs); nothing is joined.
	parts   []indexPart
	joined  map[string]int32
	jterms  []joinedTerm
	buf     run      // a segment's postings as runs yields them,
	raw     []uint64 // read here (8-byte aligned)
	corrupt bool     // a term's postings failed their check
}

// indexPart is one segment's index and the number of its first note.
type indexPart struct {
	ix    *Index
	start int32
}

// joinedTerm is a term of a joined index: its id in each segment (-1:
// none) and its document frequency.
type joinedTerm struct {
	local []int32
	df    int
}

// run is part of a term's postings, in memory: their notes, numbered
// from base in the corpus, each field's frequencies, and the field
// lengths of the notes by those numbers.
type run struct {
	doc    []int32
	tf     [nFields][]uint16
	docLen *[nFields][]uint16
	base   int32
}

// lookup returns the id of a term.
func (ix *Index) lookup(w string) (int32, bool) {
	if ix.parts != nil {
		return ix.resolve(w)
	}
	if ix.Terms != nil {
		id, ok := ix.Terms[w]
		return id, ok
	}
	return ix.dictLookup(w)
}

// resolve returns the id of a term of a joined index: found in the
// segments' vocabularies, its document frequency the sum of theirs.
func (ix *Index) resolve(w string) (int32, bool) {
	if id, ok := ix.joined[w]; ok {
		return id, id >= 0
	}
	jt := joinedTerm{local: make([]int32, len(ix.parts))}
	for k, p := range ix.parts {
		jt.local[k] = -1
		if t, ok := p.ix.dictLookup(w); ok {
			jt.local[k] = t
			jt.df += p.ix.df(t)
		}
	}
	if jt.df == 0 {
		ix.joined[w] = -1
		return 0, false
	}
	id := int32(len(ix.jterms))
	ix.jterms = append(ix.jterms, jt)
	ix.joined[w] = id
	return id, true
}

// runs yields term t's postings: one run, or for a joined index one per
// segment that has the term, in note order. A segment's are read into a
// buffer that the next run reuses (Index.readRun); a run that fails its
// check is skipped and marks the index corrupt (rank then reads the
// Markdown).
func (ix *Index) runs(t int32) iter.Seq[run] {
	return func(yield func(run) bool) {
		if ix.parts == nil {
			r := run{doc: ix.PostDoc[ix.PostStart[t]:ix.PostStart[t+1]], docLen: &ix.DocLen}
			for f := range r.tf {
				r.tf[f] = ix.PostTF[f][ix.PostStart[t]:ix.PostStart[t+1]]
			}
			yield(r)
			return
		}
		for k, lt := range ix.jterms[t].local {
			if lt < 0 {
				continue
			}
			p := ix.parts[k]
			if !p.ix.readRun(lt, &ix.buf, &ix.raw) {
				ix.corrupt = true
				continue
			}
			ix.buf.base = p.start
			if !yield(ix.buf) {
				return
			}
		}
	}
}

// joinIndexes joins the segments' indexes (starts: each one's first
// note): the statistics BM25 needs (notes, average field lengths) are
// summed from theirs; postings and field lengths are read from each
// segment in place (runs). All must be for one analyzer.
func joinIndexes(parts []indexPart) (*Index, bool) {
	ix := &Index{parts: parts, joined: map[string]int32{}}
	for k, p := range parts {
		if k == 0 {
			ix.An = p.ix.An
		} else if p.ix.An.key() != ix.An.key() {
			return nil, false
		}
		ix.N += p.ix.N
		for f := range ix.total {
			ix.total[f] += p.ix.total[f]
		}
	}
	for f := range ix.AvgLen {
		if ix.N > 0 {
			ix.AvgLen[f] = float64(ix.total[f]) / float64(ix.N)
		}
	}
	return ix, true
}

// dictLookup finds a term in an index read from a segment.
func (ix *Index) dictLookup(w string) (int32, bool) {
	lo, hi := 0, len(ix.termID)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if string(ix.termBlob[ix.termOff[m]:ix.termOff[m+1]]) < w {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(ix.termID) && string(ix.termBlob[ix.termOff[lo]:ix.termOff[lo+1]]) == w {
		return ix.termID[lo], true
	}
	return 0, false
}

func (a Analyzer) key() string { return fmt.Sprintf("stem=%t,stop=%t", a.Stem, a.StopWords) }

// Index returns the corpus's index for an analyzer, building it once.
func (c *Corpus) Index(an Analyzer) *Index {
	if ix, ok := c.indexes[an.key()]; ok {
		return ix
	}
	ix := buildIndex(c, an)
	c.indexes[an.key()] = ix
	return ix
}

// fieldTexts returns the text of each field of note i.
func (c *Corpus) fieldTexts(i int, buf *[nFields][]string) {
	n := c.Note(i)
	for f := range buf {
		buf[f] = buf[f][:0]
	}
	buf[fieldContent] = append(buf[fieldContent], n.Content)
	if n.Topic != "" {
		t := c.Topic(n.Topic)
		buf[fieldTopic] = append(buf[fieldTopic], t.Slug, t.Description)
		buf[fieldTopic] = append(buf[fieldTopic], t.Keywords...)
	} else if n.Section != "" {
		buf[fieldTopic] = append(buf[fieldTopic], n.Section)
	}
	buf[fieldTags] = append(buf[fieldTags], n.Tags...)
	buf[fieldTags] = append(buf[fieldTags], n.Category)
}

// buildIndex analyses every note once, keeping its distinct terms with
// their per-field frequencies in fixed-size blocks (in note order, so
// growing them copies nothing), then lays the postings out by term with a
// counting sort.
func buildIndex(c *Corpus, an Analyzer) *Index {
	nd := c.Len()
	ix := &Index{An: an, Terms: make(map[string]int32, nd), N: nd}
	docStart := make([]int32, nd+1) // occurrences of note d: [docStart[d], docStart[d+1])
	type occ struct {
		term int32
		tf   [nFields]uint16
	}
	const blockBits = 15
	var blocks [][]occ
	nOcc := int32(0)
	var df []int32
	var texts [nFields][]string
	var words []string
	wordID := make(map[string]int32, nd) // word (Analyzer.words) → term id; -1: a stop word
	var seenDoc, seenOcc []int32         // by term: the last note it was seen in (+1), and its occurrence there
	for f := range ix.DocLen {
		ix.DocLen[f] = make([]uint16, nd)
	}
	for i := 0; i < nd; i++ {
		c.fieldTexts(i, &texts)
		for f := 0; f < nFields; f++ {
			words = words[:0]
			for _, t := range texts[f] {
				words = an.words(words, t)
			}
			n := 0
			for _, w := range words {
				id, ok := wordID[w]
				if !ok {
					id = -1
					if t := an.term(w); t != "" {
						if id, ok = ix.Terms[t]; !ok {
							id = int32(len(df))
							ix.Terms[t] = id
							df = append(df, 0)
							seenDoc = append(seenDoc, 0)
							seenOcc = append(seenOcc, 0)
						}
					}
					wordID[w] = id
				}
				if id < 0 {
					continue
				}
				n++
				if seenDoc[id] != int32(i)+1 {
					seenDoc[id] = int32(i) + 1
					seenOcc[id] = nOcc
					if nOcc>>blockBits == int32(len(blocks)) {
						blocks = append(blocks, make([]occ, 1<<blockBits))
					}
					blocks[nOcc>>blockBits][nOcc&(1<<blockBits-1)].term = id
					nOcc++
					df[id]++
				}
				k := seenOcc[id]
				if o := &blocks[k>>blockBits][k&(1<<blockBits-1)]; o.tf[f] < math.MaxUint16 {
					o.tf[f]++
				}
			}
			ix.DocLen[f][i] = sat16(n)
			ix.total[f] += uint64(n)
		}
		docStart[i+1] = nOcc
	}
	for f := range ix.total {
		if nd > 0 {
			ix.AvgLen[f] = float64(ix.total[f]) / float64(nd)
		}
	}
	ix.PostStart = make([]int32, len(df)+1)
	for t, n := range df {
		ix.PostStart[t+1] = ix.PostStart[t] + n
	}
	nPost := ix.PostStart[len(df)]
	ix.PostDoc = make([]int32, nPost)
	osfile.Prefault(osfile.Bytes(ix.PostDoc))
	for f := range ix.PostTF {
		ix.PostTF[f] = make([]uint16, nPost)
		osfile.Prefault(osfile.Bytes(ix.PostTF[f]))
	}
	fill := df // reused: df[t] becomes the next free posting of term t
	copy(fill, ix.PostStart[:len(df)])
	for d := 0; d < nd; d++ {
		for k := docStart[d]; k < docStart[d+1]; k++ {
			o := &blocks[k>>blockBits][k&(1<<blockBits-1)]
			p := fill[o.term]
			fill[o.term]++
			ix.PostDoc[p] = int32(d)
			for f := range ix.PostTF {
				ix.PostTF[f][p] = o.tf[f]
			}
		}
	}
	return ix
}

func sat16(n int) uint16 {
	if n > math.MaxUint16 {
		return math.MaxUint16
	}
	return uint16(n)
}

// df returns the document frequency of term t.
func (ix *Index) df(t int32) int {
	if ix.parts != nil {
		return ix.jterms[t].df
	}
	return int(ix.PostStart[t+1] - ix.PostStart[t])
}

func (ix *Index) idf(t int32) float64 {
	n, df := float64(ix.N), float64(ix.df(t))
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// qterm is one weighted query term.
type qterm struct {
	text string
	id   int32
	w    float64
}

// query analyses text into weighted terms known to the index, sorted by
// text so that float sums run in a fixed order.
func (ix *Index) query(text string, extra []string) []qterm {
	words := ix.An.Terms(nil, text)
	for _, e := range extra {
		words = ix.An.Terms(words, e)
	}
	counts := map[string]float64{}
	for _, w := range words {
		counts[w]++
	}
	var q []qterm
	for w, n := range counts {
		if id, ok := ix.lookup(w); ok {
			q = append(q, qterm{text: w, id: id, w: n})
		}
	}
	sort.Slice(q, func(i, j int) bool { return q[i].text < q[j].text })
	return q
}

// RankParams tunes a ranking.
type RankParams struct {
	Name        string
	An          Analyzer
	K1          float64
	B           [nFields]float64
	W           [nFields]float64 // field weights; 0 ignores the field
	FbDocs      int              // pseudo-relevance feedback documents (0: none)
	FbTerms     int              // expansion terms taken from them
	FbWeight    float64          // weight of the expansion in the final query
	Neighbor    float64          // share of an adjacent same-session note's score added
	Proximity   float64          // bonus for query terms adjacent in the query and near in a note
	Dates       bool             // boost matching notes dated in a month or year the task names
	Entities    float64          // share of the best score a matching note filed under a topic the task names gains (0: none)
	AnswerTypes float64          // share of the best score a note giving the sort of answer the task asks for (a title, a place) gains (answertypes.go; 0: none)
	Vocab       bool             // add the memory's own terms for the task's words in other forms (vocab.go)
}

// Rankers by name. "bm25" is memctl's ranking; "bm25-plain" is the plain
// BM25 reference (lower-cased words, stop words removed, content only, no
// stemming, no feedback), kept to measure against.
var Rankers = map[string]RankParams{
	"bm25": {
		Name: "bm25", An: Analyzer{Stem: true, StopWords: true}, K1: 1.2,
		B: [nFields]float64{0.75, 0.5, 0.5}, W: [nFields]float64{1, 0.3, 0.5},
		FbDocs: 8, FbTerms: 12, FbWeight: 0.35, Neighbor: 0.5, Proximity: 0.15, Dates: true, Entities: 0.1,
		AnswerTypes: 0.1, Vocab: true,
	},
	"bm25-plain": {
		Name: "bm25-plain", An: Analyzer{StopWords: true}, K1: 1.2,
		B: [nFields]float64{0.75, 0, 0}, W: [nFields]float64{1, 0, 0},
	},
}

// DefaultRanker is the ranking inject uses unless told otherwise.
const DefaultRanker = "bm25"

// RankerNames lists the rankers, sorted.
func RankerNames() []string {
	var names []string
	for n := range Rankers {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Hit is one ranked note.
type Hit struct {
	Doc   int
	Score float64
}

// Rank scores the eligible notes against the task text and tags and
// returns those with a positive score, best first; ties go to file order.
func (c *Corpus) Rank(p RankParams, task string, tags []string, eligible func(i int) bool) []Hit {
	return c.rank(p, task, tags, eligible).top(0)
}

// ranking is the final scores of a Rank, from which the best hits are
// taken as far as they are needed, without a Hit for every scored note.
type ranking struct {
	scores []float64 // per note
	ok     []bool    // per note: eligible (nil: all)
	count  int       // eligible notes with a positive score
	hits   []Hit     // the best len(hits) of them, in order
}

// newRanking counts the hits of scores.
func newRanking(scores []float64, ok []bool) *ranking {
	r := &ranking{scores: scores, ok: ok}
	for d := range scores {
		if r.matches(d) {
			r.count++
		}
	}
	return r
}

// matches reports whether note d is a hit: eligible with a positive score.
func (r *ranking) matches(d int) bool {
	return d < len(r.scores) && r.scores[d] > 0 && (r.ok == nil || r.ok[d])
}

func (c *Corpus) rank(p RankParams, task string, tags []string, eligible func(i int) bool) *ranking {
	if p.Vocab {
		task = withoutClassifiers(task)
	}
	ix := c.Index(p.An)
	q := ix.query(task, tags)
	if p.Vocab {
		q = c.withVocab(ix, task, q)
	}
	if len(q) == 0 {
		return &ranking{}
	}
	var ok []bool
	if eligible != nil {
		ok = make([]bool, ix.N)
		osfile.Prefault(osfile.Bytes(ok))
		for d := range ok {
			ok[d] = eligible(d)
		}
	}
	scores := make([]float64, ix.N) // written whole at 100k notes and more when a word is common
	osfile.Prefault(osfile.Bytes(scores))
	ix.score(p, q, scores)
	if p.FbDocs > 0 && p.FbTerms > 0 && p.FbWeight > 0 {
		top := topHits(scores, ok, p.FbDocs)
		if exp := c.expand(ix, p, q, top); len(exp) > 0 {
			clear(scores)
			ix.score(p, exp, scores)
		}
	}
	if p.Proximity > 0 {
		c.proximity(ix, p, task, scores, ok)
	}
	if p.Neighbor > 0 {
		c.smoothNeighbors(scores, p.Neighbor)
	}
	if p.Dates {
		c.boostDates(task, scores)
	}
	if p.Entities > 0 {
		ix.boostEntities(task, p.Entities, scores)
	}
	if p.AnswerTypes > 0 {
		c.boostAnswerTypes(task, p.AnswerTypes, scores, ok)
	}
	if ix.corrupt { // a term's postings in the cache failed their check
		c.fallback() // rank again on the Markdown
		return c.rank(p, task, tags, eligible)
	}
	return newRanking(scores, ok)
}

// top returns the best n hits in order (n <= 0: all).
func (r *ranking) top(n int) []Hit {
	if n <= 0 || n > r.count {
		n = r.count
	}
	if n > len(r.hits) {
		if n*4 >= r.count {
			r.hits = positive(r.scores, r.ok)
			sortHits(r.hits)
		} else {
			r.hits = topHits(r.scores, r.ok, n)
		}
	}
	return r.hits[:n:n]
}

// better orders hits: higher score first, then file order.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Doc < b.Doc
}

func sortHits(h []Hit) { sort.Slice(h, func(i, j int) bool { return better(h[i], h[j]) }) }

// selectBest moves the best n hits to the front of h (in no order), with
// a bounded heap whose root is the worst kept hit.
func selectBest(h []Hit, n int) {
	if n <= 0 {
		return
	}
	for i := n/2 - 1; i >= 0; i-- {
		siftWorst(h[:n], i)
	}
	for k := n; k < len(h); k++ {
		if better(h[k], h[0]) {
			h[0], h[k] = h[k], h[0]
			siftWorst(h[:n], 0)
		}
	}
}

// siftWorst restores the heap h (the worst hit at the root) below i.
func siftWorst(h []Hit, i int) {
	n := len(h)
	for {
		w := i
		if l := 2*i + 1; l < n && better(h[w], h[l]) {
			w = l
		}
		if r := 2*i + 2; r < n && better(h[w], h[r]) {
			w = r
		}
		if w == i {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

func positive(scores []float64, ok []bool) []Hit {
	n := 0
	for d, s := range scores {
		if s > 0 && (ok == nil || ok[d]) {
			n++
		}
	}
	hits := make([]Hit, 0, n)
	for d, s := range scores {
		if s > 0 && (ok == nil || ok[d]) {
			hits = append(hits, Hit{Doc: d, Score: s})
		}
	}
	return hits
}

func (ix *Index) score(p RankParams, q []qterm, scores []float64) {
	for _, qt := range q {
		idf := ix.idf(qt.id) * qt.w
		for r := range ix.runs(qt.id) {
			sc := scores[r.base:]
			for k, d := range r.doc {
				tf := 0.0
				for f := 0; f < nFields; f++ {
					if p.W[f] == 0 {
						continue
					}
					x := r.tf[f][k]
					if x == 0 {
						continue
					}
					l := 1.0
					if ix.AvgLen[f] > 0 {
						l = 1 - p.B[f] + p.B[f]*float64(r.docLen[f][d])/ix.AvgLen[f]
					}
					tf += p.W[f] * float64(x) / l
				}
				if tf > 0 {
					sc[d] += idf * tf / (p.K1 + tf)
				}
			}
		}
	}
}

// topHits returns the eligible notes (ok nil: all) with positive score,
// best first, at most n.
func topHits(scores []float64, ok []bool, n int) []Hit {
	if n <= 0 {
		return newRanking(scores, ok).top(0)
	}
	// One pass keeping the best n in a heap whose root is the worst kept.
	h := make([]Hit, 0, n)
	for d, s := range scores {
		if s <= 0 || ok != nil && !ok[d] {
			continue
		}
		if len(h) < n {
			h = append(h, Hit{Doc: d, Score: s})
			if len(h) == n {
				selectBest(h, n) // heapifies
			}
			continue
		}
		if x := (Hit{Doc: d, Score: s}); better(x, h[0]) {
			h[0] = x
			siftWorst(h, 0)
		}
	}
	sortHits(h)
	return h
}

// expand is RM3-style pseudo-relevance feedback: the terms most likely
// under the top notes (weighted by their scores) are added to the query,
// which keeps (1-FbWeight) of its mass.
func (c *Corpus) expand(ix *Index, p RankParams, q []qterm, top []Hit) []qterm {
	if len(top) == 0 {
		return nil
	}
	var sum float64
	for _, h := range top {
		sum += h.Score
	}
	rel := map[string]float64{}
	var words []string
	for _, h := range top {
		words = ix.An.Terms(words[:0], c.Note(h.Doc).Content)
		if len(words) == 0 {
			continue
		}
		w := h.Score / sum / float64(len(words))
		for _, t := range words {
			rel[t] += w
		}
	}
	type tw struct {
		t string
		w float64
	}
	var cand []tw
	for t, w := range rel {
		id, ok := ix.lookup(t)
		if !ok || ix.df(id) > ix.N/4+1 {
			continue // too common to say anything
		}
		cand = append(cand, tw{t, w})
	}
	sort.Slice(cand, func(i, j int) bool {
		if cand[i].w != cand[j].w {
			return cand[i].w > cand[j].w
		}
		return cand[i].t < cand[j].t
	})
	if len(cand) > p.FbTerms {
		cand = cand[:p.FbTerms]
	}
	var qsum, esum float64
	for _, qt := range q {
		qsum += qt.w
	}
	for _, e := range cand {
		esum += e.w
	}
	merged := map[string]float64{}
	for _, qt := range q {
		merged[qt.text] += (1 - p.FbWeight) * qt.w / qsum
	}
	for _, e := range cand {
		merged[e.t] += p.FbWeight * e.w / esum
	}
	out := make([]qterm, 0, len(merged))
	for t, w := range merged {
		id, _ := ix.lookup(t)
		out = append(out, qterm{text: t, id: id, w: w})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].text < out[j].text })
	return out
}

// smoothNeighbors adds a share of the better adjacent note's score to each
// note, when the neighbour is in the same file and has the same creation
// date (notes written from one session tend to be needed together). A
// corpus read from the cache is smoothed segment by segment: notes of
// different segments are in different files. It smooths scores in place.
func (c *Corpus) smoothNeighbors(scores []float64, mu float64) {
	if lz := c.lz; lz != nil {
		for k, p := range lz.parts {
			a, b := lz.start[k], lz.start[k+1]
			smooth(scores[a:b], mu, p.session)
		}
		return
	}
	smooth(scores, mu, c.sessions())
}

// sessions numbers the parsed notes' sessions as the cache does
// (sessionNumbers): 0 without a creation date, else one number per file
// and creation time.
func (c *Corpus) sessions() []uint32 {
	if c.session == nil {
		metas := make([]noteMeta, len(c.notes))
		for i := range c.notes {
			metas[i] = metaOf(&c.notes[i])
		}
		c.session = sessionNumbers(fileRanges(len(c.notes), func(i int) string { return c.notes[i].File }), metas)
	}
	return c.session
}

// smooth adds to each score the share mu of the better session
// neighbour's score (as it was before smoothing) within NeighborWindow,
// decayed by distance; session numbers the notes' sessions (0: no
// creation date). It works in place: the scores before d, already
// smoothed, are kept as they were in a ring of NeighborWindow.
func smooth(scores []float64, mu float64, session []uint32) {
	w := NeighborWindow
	was := make([]float64, w) // was[(d-dist)%w]: scores[d-dist] before smoothing
	for d := range scores {
		orig := scores[d]
		if s := session[d]; s != 0 {
			best := 0.0
			for dist := 1; dist <= w; dist++ {
				decay := 1 / float64(dist)
				if nb := d - dist; nb >= 0 && was[nb%w]*decay > best && session[nb] == s {
					best = was[nb%w] * decay
				}
				if nb := d + dist; nb < len(scores) && scores[nb]*decay > best && session[nb] == s {
					best = scores[nb] * decay
				}
			}
			scores[d] += mu * best
		}
		if w > 0 {
			was[d%w] = orig
		}
	}
}

// NeighborWindow is how far (in entries) session-neighbour smoothing looks.
var NeighborWindow = 2

// proximityDocs is how many of the best notes the proximity bonus looks at.
const proximityDocs = 100

// proximity adds, to the best notes, a bonus for each pair of terms that
// are neighbours in the task and at most three terms apart in the note
// ("support group", "order service"), weighted by the rarer term's idf.
func (c *Corpus) proximity(ix *Index, p RankParams, task string, scores []float64, eligible []bool) {
	var seq []int32
	for _, w := range ix.An.Terms(nil, task) {
		if id, ok := ix.lookup(w); ok {
			seq = append(seq, id)
		}
	}
	if len(seq) < 2 {
		return
	}
	top := topHits(scores, eligible, proximityDocs)
	var words []string
	for _, h := range top {
		words = ix.An.Terms(words[:0], c.Note(h.Doc).Content)
		pos := map[int32][]int{}
		for i, w := range words {
			if id, ok := ix.lookup(w); ok {
				pos[id] = append(pos[id], i)
			}
		}
		bonus := 0.0
		for i := 0; i+1 < len(seq); i++ {
			a, b := seq[i], seq[i+1]
			if a == b || !near(pos[a], pos[b], 3) {
				continue
			}
			bonus += math.Min(ix.idf(a), ix.idf(b))
		}
		scores[h.Doc] += p.Proximity * bonus
	}
}

func near(a, b []int, dist int) bool {
	for _, x := range a {
		for _, y := range b {
			if x-y <= dist && y-x <= dist {
				return true
			}
		}
	}
	return false
}

// normalize is used by search snippets: lower-case and fold whitespace.
func normalize(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
