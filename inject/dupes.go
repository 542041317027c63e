package inject

import "fmt"

// laterDuplicates marks the notes inject must skip because an earlier
// eligible note (file order: MEMORY.md, then topic files) has the same id:
// a duplicate id written by hand, which the next memctl write renumbers.
// The block never shows two entries with one id. It returns the skipped
// notes and a warning for each.
func (c *Corpus) laterDuplicates(o *Options) (map[int]bool, []string) {
	first := map[string]int{}
	var skip map[int]bool
	var warns []string
	for _, k := range c.sharedIDs() {
		i := int(k)
		n := c.Note(i)
		if n.ID == "" || !o.Eligible(n) {
			continue
		}
		j, dup := first[n.ID]
		if !dup {
			first[n.ID] = i
			continue
		}
		if skip == nil {
			skip = map[int]bool{}
		}
		skip[i] = true
		warns = append(warns, fmt.Sprintf("duplicate id %s at %s:%d: only the first (%s:%d) is injected; the next memctl write (consolidate, import) renumbers it",
			n.ID, n.File, n.Line, c.Note(j).File, c.Note(j).Line))
	}
	return skip, warns
}
