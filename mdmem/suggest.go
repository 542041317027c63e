package mdmem

import (
	"context"
	"sort"
	"strconv"
	"strings"
)

// SuggestIDs returns up to three ids of known that a mistyped id probably
// meant: the same id with other zero padding ("pref-1" → "pref-001"), else
// the ids closest to it when they are one or two edits away (a typo, a
// swapped pair of characters). It returns nil when nothing is close.
func SuggestIDs(id string, known []string) []string {
	id = strings.ToLower(strings.TrimSpace(id))
	if id == "" {
		return nil
	}
	type scored struct {
		id   string
		dist int
	}
	var found []scored
	for _, k := range known {
		if k == id {
			continue
		}
		d := idDistance(id, k)
		if samePadded(id, k) {
			d = 0
		}
		if d <= 2 && d < len(k)/2+1 {
			found = append(found, scored{k, d})
		}
	}
	sort.Slice(found, func(i, j int) bool {
		if found[i].dist != found[j].dist {
			return found[i].dist < found[j].dist
		}
		return found[i].id < found[j].id
	})
	var out []string
	for _, s := range found {
		if len(out) == 3 || s.dist > found[0].dist {
			break // only the closest ones: a near tie is a guess, not a hint
		}
		out = append(out, s.id)
	}
	return out
}

// SuggestIDs returns the memory's entry ids a mistyped id probably meant.
func (m *Memory) SuggestIDs(id string) []string {
	known := make([]string, 0, len(m.byID))
	for k := range m.byID {
		known = append(known, k)
	}
	return SuggestIDs(id, known)
}

// IDsIn returns the entry ids of the memory in dir, each once, read one
// file at a time (Walk): what SuggestIDs compares a mistyped id with.
func IDsIn(ctx context.Context, dir string) ([]string, error) {
	seen := map[string]bool{}
	var ids []string
	err := Walk(ctx, dir, func(d *Doc) error {
		for _, e := range d.Entries {
			if e.ID != "" && !seen[e.ID] {
				id := strings.Clone(e.ID)
				seen[id] = true
				ids = append(ids, id)
			}
		}
		return nil
	})
	return ids, err
}

// samePadded reports whether a and b are the same prefix and number
// written with different zero padding.
func samePadded(a, b string) bool {
	ap, an, ok1 := strings.Cut(a, "-")
	bp, bn, ok2 := strings.Cut(b, "-")
	if !ok1 || !ok2 || ap != bp {
		return false
	}
	x, err1 := strconv.Atoi(an)
	y, err2 := strconv.Atoi(bn)
	return err1 == nil && err2 == nil && x == y
}

// idDistance is the optimal string alignment distance (Levenshtein with
// adjacent transpositions) between two short ids.
func idDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// DidYouMean formats suggestions as a hint ("did you mean pref-001?"), or
// "" when there are none.
func DidYouMean(suggestions []string) string {
	switch len(suggestions) {
	case 0:
		return ""
	case 1:
		return "did you mean " + suggestions[0] + "?"
	}
	return "did you mean " + strings.Join(suggestions[:len(suggestions)-1], ", ") + " or " + suggestions[len(suggestions)-1] + "?"
}
