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
}

func newIndex(n int) *index {
	return &index{exact: make(map[string][]int32, n), post: make(map[uint64][]int32, 4*n)}
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

func (x *index) addItem(it *item) {
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
	for _, i := range x.exact[q.norm] {
		if it := x.items[i]; it.scope == q.scope && ok(it) {
			return it
		}
	}
	return nil
}

// best returns the items most similar to q (Jaccard of shingles) at or
// above min, best first (ties: index order), at most k, among those
// accepted by ok. Only the k best are kept while the items are scored,
// so a lookup that touches every item of a large memory sorts nothing.
func (x *index) best(q *item, min float64, k int, ok func(*item) bool) ([]*item, []float64) {
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
	better := func(a, b hit) bool { return a.j > b.j || a.j == b.j && a.i < b.i }
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
	return its, js
}
