package inject

import (
	"strings"
	"unicode"
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
	if len(scopes) == 0 {
		return SearchWhere(c, query, nil, limit)
	}
	return SearchWhere(c, query, func(n *Note) bool { return InScope(n.Scope, scopes) }, limit)
}

// SearchWhere is Search over the entries keep accepts (nil: every entry):
// memctl mcp keeps its caller's scopes and leaves Pending confirmation
// out. Only the best limit hits of the ranking are put in order (limit
// <= 0: all of them).
func SearchWhere(c *Corpus, query string, keep func(*Note) bool, limit int) []SearchHit {
	var eligible func(int) bool
	if keep != nil {
		eligible = func(i int) bool { return keep(c.Note(i)) }
	}
	var out []SearchHit
	seen := map[int]bool{}
	for _, w := range strings.Fields(query) {
		if !mayBeID(w) {
			continue
		}
		for i := 0; i < c.Len(); i++ {
			if id := c.id(i); id != "" && strings.EqualFold(id, w) && (eligible == nil || eligible(i)) && !seen[i] {
				seen[i] = true
				out = append(out, searchHit(c.Note(i), 0))
			}
		}
	}
	p := Rankers[DefaultRanker]
	p.Neighbor = 0
	// The hits taken below: at most limit, of which the id matches found
	// above (len(out) of them) may be met again and skipped.
	for _, h := range c.rank(p, query, nil, eligible).top(max(limit, 0)) {
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

// mayBeID reports whether some id could equal w under Unicode case
// folding (strings.EqualFold): ids are ASCII (mdmem.IsValidID), so w
// folded rune by rune to ASCII must be a valid id. It spares the scan of
// every note's id for the words of a query that are not ids.
func mayBeID(w string) bool {
	b := make([]byte, 0, len(w))
	for _, r := range w {
		a := r
		for f := unicode.SimpleFold(r); a >= utf8.RuneSelf && f != r; f = unicode.SimpleFold(f) {
			a = f
		}
		if a >= utf8.RuneSelf {
			return false
		}
		b = append(b, byte(unicode.ToLower(a)))
	}
	return mdmem.IsValidID(string(b))
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
