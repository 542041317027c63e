package consolidate

import (
	"sort"
	"strings"

	"github.com/memctl/memctl/mdmem"
)

// item is one entry or planned addition known to the matcher.
type item struct {
	entry *mdmem.Entry // an existing entry, or
	add   *addition    // an entry planned in this run
	cand  string       // for triage: the candidate id this item stands for
	text  string       // the text the item was made of
	norm  string       // the tokens, space-separated
	key   string       // contentKey of the tokens
	sh    []uint64
	uni   []uint64 // the content words' unigram shingles (no fillers)
	scope string
	cat   string
	// ord is the item's place in the order of the whole index (entries
	// in Memory.Docs order, then planned additions): ties are broken by
	// it, whatever part of the index is in memory (matchBase).
	ord int64
}

func (it *item) current() *mdmem.Entry {
	if it.add != nil {
		return it.add.e
	}
	return it.entry
}

// index finds exact and near duplicates among items (compare decides).
type index struct {
	items  []*item
	exact  map[string][]int32
	post   map[uint64][]int32
	counts []int32
	// touched is best's scratch list of the items a lookup met.
	touched []int32
	// nextAdd is the order of the next planned addition.
	nextAdd int64
	// base is the part of the index read from the match cache; nil when
	// every entry is an item here.
	base *planBase
}

func newIndex(n int) *index {
	return &index{exact: make(map[string][]int32, n), post: make(map[uint64][]int32, 4*n), nextAdd: addOrd}
}

func scopeKey(s []string) string {
	if len(s) == 0 {
		return ""
	}
	c := append([]string(nil), s...)
	sort.Strings(c)
	return strings.Join(c, "\x00")
}

func newItem(text string, cat string, scope []string) *item {
	toks := tokens(text)
	it := &item{text: text, norm: strings.Join(toks, " "), key: contentKey(toks), sh: shingles(toks), uni: unigrams(toks), scope: scopeKey(scope), cat: cat}
	return it
}

// addItem adds a planned addition (or, in tests, any item), after every
// entry in the index's order.
func (x *index) addItem(it *item) {
	it.ord = x.nextAdd
	x.nextAdd++
	x.addEntry(it, it.ord)
}

// addEntry adds the item of an entry at its place ord in the index's
// order (ordOf); entries are added in that order.
func (x *index) addEntry(it *item, ord int64) {
	it.ord = ord
	i := int32(len(x.items))
	x.items = append(x.items, it)
	x.counts = append(x.counts, 0)
	if it.norm == "" {
		return
	}
	x.exact[it.norm] = append(x.exact[it.norm], i)
	for _, h := range it.sh {
		x.post[h] = append(x.post[h], i)
	}
}

// findExact returns the first item with the same normalised text and scope
// accepted by ok.
func (x *index) findExact(q *item, ok func(*item) bool) *item {
	var fromBase []baseHit
	if x.base != nil {
		fromBase = x.base.exact(q)
	}
	for _, i := range x.exact[q.norm] {
		it := x.items[i]
		for len(fromBase) > 0 && fromBase[0].ord < it.ord {
			if b := x.base.accept(fromBase[0], q, ok); b != nil && b.norm == q.norm {
				return b
			}
			fromBase = fromBase[1:]
		}
		if it.scope == q.scope && ok(it) {
			return it
		}
	}
	for _, h := range fromBase {
		if b := x.base.accept(h, q, ok); b != nil && b.norm == q.norm {
			return b
		}
	}
	return nil
}

// best returns the items most similar to q (Jaccard of shingles) at or
// above min, best first (ties: index order), at most k, among those
// accepted by ok. Only the k best are kept while the items are scored,
// so a lookup that touches every item of a large memory sorts nothing.
// pre says which entries of the match cache may pass ok, from their
// category, scope and place alone (nil: none); it must accept every
// entry ok accepts.
func (x *index) best(q *item, min float64, k int, ok func(*item) bool, pre func(cat, scope string, place mdmem.Place) bool) ([]*item, []float64) {
	if len(q.sh) == 0 || k <= 0 {
		return nil, nil
	}
	touched := x.touched[:0]
	for _, h := range q.sh {
		for _, i := range x.post[h] {
			if x.counts[i] == 0 {
				touched = append(touched, i)
			}
			x.counts[i]++
		}
	}
	x.touched = touched
	type hit struct {
		i int32
		j float64
	}
	better := func(a, b hit) bool { return a.j > b.j || a.j == b.j && x.items[a.i].ord < x.items[b.i].ord }
	hits := make([]hit, 0, k) // the best so far, in order
	for _, i := range touched {
		inter := float64(x.counts[i])
		x.counts[i] = 0
		it := x.items[i]
		j := inter / (float64(len(q.sh)+len(it.sh)) - inter)
		h := hit{i, j}
		if j < min || len(hits) == k && !better(h, hits[k-1]) || it.scope != q.scope || !ok(it) {
			continue
		}
		at := sort.Search(len(hits), func(n int) bool { return better(h, hits[n]) })
		if len(hits) < k {
			hits = append(hits, hit{})
		}
		copy(hits[at+1:], hits[at:len(hits)-1])
		hits[at] = h
	}
	its := make([]*item, len(hits))
	js := make([]float64, len(hits))
	for n, h := range hits {
		its[n], js[n] = x.items[h.i], h.j
	}
	if x.base != nil && pre != nil {
		its, js = x.base.best(q, min, k, ok, pre, its, js)
	}
	return its, js
}
