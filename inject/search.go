package inject

import (
	"strings"
	"unicode/utf8"

	"github.com/memctl/memctl/mdmem"
)

// SearchHit is one result of memctl search.
type SearchHit struct {
	ID           string      `json:"id"`
	Place        mdmem.Place `json:"place"`
	File         string      `json:"file"`
	Line         int         `json:"line"`
	Date         string      `json:"created_at,omitempty"`
	Score        float64     `json:"score"`
	Content      string      `json:"content"`
	Snippet      string      `json:"snippet"`
	Scope        []string    `json:"scope"`
	SupersededBy string      `json:"superseded_by,omitempty"`
}

// Search ranks every entry (core, pending, topics, archive: L3 reads
// everything) against the query; an entry whose id is a word of the query
// comes first. scopes filter as in inject (none or "all": every scope).
func Search(c *Corpus, query string, scopes []string, limit int) []SearchHit {
	return SearchWhere(c, query, func(n *Note) bool { return len(scopes) == 0 || InScope(n.Scope, scopes) }, limit)
}

// SearchWhere is Search over the entries keep accepts: memctl mcp keeps
// its caller's scopes and leaves Pending confirmation out.
func SearchWhere(c *Corpus, query string, keep func(*Note) bool, limit int) []SearchHit {
	eligible := func(i int) bool { return keep(c.Note(i)) }
	var out []SearchHit
	seen := map[int]bool{}
	for _, w := range strings.Fields(query) {
		for i := 0; i < c.Len(); i++ {
			if id := c.id(i); id != "" && strings.EqualFold(id, w) && eligible(i) && !seen[i] {
				seen[i] = true
				out = append(out, searchHit(c.Note(i), 0))
			}
		}
	}
	p := Rankers[DefaultRanker]
	p.Neighbor = 0
	for _, h := range c.Rank(p, query, nil, eligible) {
		if limit > 0 && len(out) >= limit {
			break
		}
		if !seen[h.Doc] {
			out = append(out, searchHit(c.Note(h.Doc), h.Score))
		}
	}
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out
}

func searchHit(n *Note, score float64) SearchHit {
	h := SearchHit{ID: n.Ref(), Place: n.Place, File: n.File, Line: n.Line, Score: float64(int(score*1e4+0.5)) / 1e4,
		Content: cleanText(n.Content), Scope: n.Scope, SupersededBy: n.SupersededBy}
	if d := n.Date(); !d.IsZero() {
		h.Date = mdmem.FormatTime(d)
	}
	h.Snippet = Snippet(h.Content, 120)
	return h
}

// Snippet shortens s to at most n runes, at a word boundary, with "…".
func Snippet(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > len(cut)/2 {
		cut = cut[:i]
	}
	return cut + "…"
}
