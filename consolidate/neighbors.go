package consolidate

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/memctl/memctl/mdmem"
)

// neighbors returns the live entries of the candidate's scope most likely
// to be what it updates, restates or complements, best first, at most
// consolidate.neighbors of them: the rule's own find first (upd: the
// same statement with a new value or another change; see compare), then the inject ranking (BM25 over stemmed text, topic and
// tags, with feedback) of the candidate's text and topic, fused with the
// ranking by embedding when Input.Vectors holds them (without
// Input.Retrieval, the embedding ranking alone). Entries of the
// candidate's category come first; one of another category is shown
// only when it outranks every entry of the category. No similarity
// threshold gates it: a reworded update shares few words with its
// target, and retrieval ranks it high anyway.
func (p *planner) neighbors(c *mdmem.Candidate, q *item, upd *item) []*item {
	k := p.cfg.Consolidate.Neighbors
	if k < 1 {
		k = 1
	}
	var out []*item
	seen := map[*item]bool{}
	take := func(it *item) {
		if it != nil && !seen[it] && len(out) < k {
			seen[it] = true
			out = append(out, it)
		}
	}
	ok := func(it *item) bool { return it.entry != nil && it.scope == q.scope && p.liveOK(it) }
	if upd != nil && ok(upd) {
		take(upd)
	}
	rule := len(out)
	if p.search == nil && p.in.Retrieval != nil {
		p.search = p.retrieval()
	}
	query := c.Content
	if c.Topic != "" {
		query += " " + c.Topic
	}
	// The ranking: inject's, fused with the embedding ranking when
	// vectors are there (reciprocal rank fusion).
	limit := 8*k + 16
	var ranked []*item
	for n := limit; p.search != nil; n *= 4 {
		// Search ranks archived entries and other scopes too: when they
		// crowd out the live ones, look further down (twice at most).
		ranked = ranked[:0]
		hits := p.search(query, n)
		same := 0
		for _, id := range hits {
			if e := p.find(id); e != nil {
				if it := p.indexed(e); it != nil && ok(it) {
					ranked = append(ranked, it)
					if it.cat == q.cat {
						same++
					}
				}
			}
		}
		if same >= min(k, p.liveOf(q)) || len(hits) < n || n >= 16*limit {
			break
		}
	}
	if dense := p.denseRanking(c, ok, limit); len(dense) > 0 {
		ranked = fuse(ranked, dense)
	}
	var other *item
	sameSeen := false
	for _, it := range ranked {
		if len(out) >= k {
			break
		}
		if it.cat != q.cat {
			if !sameSeen && other == nil {
				other = it
			}
			continue
		}
		sameSeen = true
		take(it)
	}
	if other != nil && rule < k {
		// It ranked above every entry of the category: show it, after
		// the rule's own finds.
		if len(out) >= k {
			out = out[:k-1]
		}
		out = append(out[:rule:rule], append([]*item{other}, out[rule:]...)...)
	}
	return out
}

// retrieval returns Input.Retrieval's search over the whole memory. A
// plan that read the memory in part ranks it from the retrieval's own
// cache; without one that holds every entry it is refused
// (errMatchCache): the run plans again on every file.
func (p *planner) retrieval() func(query string, n int) []string {
	b := p.idx.base
	if b == nil {
		return p.in.Retrieval.Index(p.in.Mem)
	}
	if r, ok := p.in.Retrieval.(dirRetrieval); ok {
		if search := r.IndexDir(p.in.Mem.Dir, p.total); search != nil {
			return search
		}
	}
	b.fail(errRankAll)
	return nil
}

// errRankAll says a plan that read the memory in part needs the
// neighbours' ranking of every entry, and the retrieval has no cache of
// them (no inject yet): the run reads every file, as without the match
// cache (nothing is wrong: it is not a warning).
var errRankAll = fmt.Errorf("%w: the neighbours' ranking needs every file", errMatchCache)

// byCreated orders candidates by their date, then by queue file name
// (the id), so batches are the same on every run over the same queue.
func byCreated(cs []*mdmem.Candidate) []*mdmem.Candidate {
	out := append([]*mdmem.Candidate(nil), cs...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i].CreatedAt, out[j].CreatedAt
		if !a.Equal(b) {
			return a.Before(b)
		}
		return strings.Compare(out[i].ID, out[j].ID) < 0
	})
	return out
}

// overlap is the share of q's content words, weighted by rarity, that
// it also states: Σ idf of the words both have / Σ idf of q's words
// (BM25 idf over every item the plan knows).
func (p *planner) overlap(q, it *item) float64 {
	have := map[uint64]bool{}
	for _, h := range it.sh {
		have[h] = true
	}
	n := float64(len(p.idx.items)) + 1
	if b := p.idx.base; b != nil {
		n += float64(b.mb.n)
	}
	var shared, all float64
	for _, h := range q.uni {
		// BM25's idf: near log(n/df) in a large memory, and still above 0
		// for a word two of three items share, so that in a memory of one
		// or two entries a shared word still counts.
		df := float64(len(p.idx.post[h]))
		if b := p.idx.base; b != nil {
			df += float64(b.df(h))
		}
		w := math.Log(1 + (n-df+0.5)/(df+0.5))
		all += w
		if have[h] {
			shared += w
		}
	}
	if all == 0 {
		return 0
	}
	return shared / all
}

// denseRanking returns the entries accepted by ok, most similar to the
// candidate's vector first (cosine of unit vectors), at most limit; nil
// without vectors.
func (p *planner) denseRanking(c *mdmem.Candidate, ok func(*item) bool, limit int) []*item {
	qv := p.in.Vectors[mdmem.OneLine(c.Content)]
	if qv == nil {
		return nil
	}
	type hit struct {
		it *item
		s  float64
	}
	var hits []hit
	for _, it := range p.idx.items {
		if it.entry == nil || !ok(it) {
			continue
		}
		if v := p.in.Vectors[it.entry.Content]; v != nil {
			if d := dot(qv, v); d > 0 {
				hits = append(hits, hit{it, d})
			}
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].s > hits[j].s })
	var out []*item
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, h.it)
	}
	return out
}

// liveOf is how many live entries share q's category and scope (counted
// once per plan).
func (p *planner) liveOf(q *item) int {
	if p.liveCount == nil {
		p.liveCount = map[string]int{}
		for _, it := range p.idx.items {
			if it.entry != nil && live(it.entry.Place) {
				p.liveCount[it.cat+"\x00"+it.scope]++
			}
		}
		if b := p.idx.base; b != nil {
			b.liveCounts(p.liveCount)
		}
	}
	return p.liveCount[q.cat+"\x00"+q.scope]
}
