package consolidate

import (
	"github.com/memctl/memctl/mdmem"
)

// Cluster is a group of related candidates, with the existing entries they
// resemble, that the LLM judges together.
type Cluster struct {
	Cands   []*mdmem.Candidate
	Entries []*mdmem.Entry
}

// Triage runs the rule stages and returns the candidates they cannot
// settle, each with the live entries retrieval finds for it
// (consolidate.neighbors; see neighbors), grouped into clusters:
// candidates that resemble each other, or whose best neighbour is the
// same entry, are judged together. Candidates and clusters are ordered by
// date, then queue file name, so the same queue gives the same requests.
// A candidate retrieval finds nothing for is added by rule.
func Triage(in *Input) []*Cluster {
	cl, _ := triage(in)
	return cl
}

// triage is Triage; the error is the match cache's (errMatchCache) when
// the memory was read in part and the cache did not serve: then the
// clusters are not those of the whole memory.
func triage(in *Input) ([]*Cluster, error) {
	tin := *in
	tin.LLMCands, tin.Decisions = nil, nil
	p := newPlanner(&tin)
	p.triage = true
	p.llmMode = true
	p.amb = map[string][]*item{}
	for _, c := range in.Cands {
		if !p.consumed[c.ID] && !p.held[c.ID] {
			p.candidate(c)
		}
	}
	order := byCreated(in.Cands)
	pos := map[string]int{}
	for i, c := range order {
		pos[c.ID] = i
	}
	parent := map[string]string{}
	var find func(string) string
	find = func(x string) string {
		if parent[x] == "" || parent[x] == x {
			parent[x] = x
			return x
		}
		r := find(parent[x])
		parent[x] = r
		return r
	}
	join := func(a, b string) {
		ra, rb := find(a), find(b)
		if ra != rb {
			if pos[ra] < pos[rb] {
				parent[rb] = ra
			} else {
				parent[ra] = rb
			}
		}
	}
	var members []string
	for _, c := range order {
		if p.amb[c.ID] != nil {
			members = append(members, c.ID)
		}
	}
	best := map[*mdmem.Entry]string{} // entry → the first candidate whose best neighbour it is
	for _, id := range members {
		find(id)
		for n, it := range p.amb[id] {
			switch {
			case it.cand != "" && p.amb[it.cand] != nil:
				join(id, it.cand)
			case n == 0 && it.entry != nil:
				if o, ok := best[it.entry]; ok {
					join(id, o)
				} else {
					best[it.entry] = id
				}
			}
		}
	}
	groups := map[string]*Cluster{}
	seenEntry := map[string]map[*mdmem.Entry]bool{}
	var roots []string
	for _, id := range members {
		r := find(id)
		g := groups[r]
		if g == nil {
			g = &Cluster{}
			groups[r] = g
			seenEntry[r] = map[*mdmem.Entry]bool{}
			roots = append(roots, r)
		}
		g.Cands = append(g.Cands, p.cands[id])
		for _, it := range p.amb[id] {
			if it.entry != nil && !seenEntry[r][it.entry] {
				seenEntry[r][it.entry] = true
				g.Entries = append(g.Entries, it.entry)
			}
		}
	}
	out := make([]*Cluster, 0, len(roots))
	for _, r := range roots {
		out = append(out, groups[r])
	}
	if b := p.idx.base; b != nil && b.err != nil {
		return nil, b.err
	}
	return out, nil
}
