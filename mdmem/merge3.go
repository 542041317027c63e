package mdmem

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"
)

// mergeOnto applies memctl's change of a file (old → new) to a version a
// person committed in the meantime (theirs, also derived from old), the
// way recovery finishes an interrupted write on top of a person's commit.
// Memory files are merged line by line and then checked entry by entry:
// every entry (and every line outside entries) must come out as the side
// that changed it left it, and an entry both sides changed differently, or
// an id used twice, is a conflict (ok false: nothing is merged). The
// committed state (.memctl/state.json) keeps the larger high-water mark of
// each prefix. Any other file, and a memory file both sides created
// (old nil), merges only when one side left it alone.
func mergeOnto(path string, old, new, theirs []byte) (merged []byte, ok bool) {
	switch {
	case string(theirs) == string(old) || string(theirs) == string(new):
		return new, true
	case string(new) == string(old):
		return theirs, true
	case path == StatePath:
		return mergeState(old, new, theirs)
	case !strings.HasSuffix(path, ".md"), old == nil:
		return nil, false // a memory file both sides created differently: two titles, two intents
	}
	lines := merge3Lines(splitLines(old), splitLines(new), splitLines(theirs))
	merged = []byte(strings.Join(lines, ""))
	if !mergedEntriesAgree(path, old, new, theirs, merged) {
		return nil, false
	}
	return merged, true
}

// mergeState merges two committed states: each prefix keeps the larger
// high-water mark, so no id either side allocated is handed out again.
func mergeState(_, new, theirs []byte) ([]byte, bool) {
	var a, b State
	if json.Unmarshal(new, &a) != nil || json.Unmarshal(theirs, &b) != nil {
		return nil, false
	}
	out := State{LastID: map[string]int{}}
	for _, st := range []State{a, b} {
		for p, n := range st.LastID {
			out.LastID[p] = max(out.LastID[p], n)
		}
	}
	if out.check() != nil {
		return nil, false
	}
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return nil, false
	}
	return append(data, '\n'), true
}

// splitLines splits src into lines that keep their line ending.
func splitLines(src []byte) []string {
	lines := strings.SplitAfter(string(src), "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	return lines
}

// merge3Lines is a three-way merge of line sequences: where only one side
// changed a stretch of the base, its version wins; where both did, the
// person's lines (b) stay, minus the lines memctl removed, and memctl's new
// lines follow. The caller checks the result entry by entry.
func merge3Lines(o, a, b []string) []string {
	var out []string
	merge3Walk(o, a, b, func(l string) { out = append(out, l) }, func(_ int, o, a, b []string) {
		out = append(out, resolveChunk(o, a, b)...)
	})
	return out
}

// merge3Walk walks a three-way merge of line sequences in order: each base
// line both sides kept goes to same; each stretch between them, where
// either side changed something, goes to chunk with its start in o and
// the base's, a's and b's versions of it.
func merge3Walk(o, a, b []string, same func(line string), chunk func(at int, o, a, b []string)) {
	ma, mb := matchLines(o, a), matchLines(o, b)
	i, ja, jb := 0, 0, 0
	for {
		for i < len(o) && ma[i] == ja && mb[i] == jb {
			same(o[i])
			i, ja, jb = i+1, ja+1, jb+1
		}
		if i == len(o) && ja == len(a) && jb == len(b) {
			return
		}
		k := i
		for k < len(o) && (ma[k] < 0 || mb[k] < 0) {
			k++
		}
		ea, eb := len(a), len(b)
		if k < len(o) {
			ea, eb = ma[k], mb[k]
		}
		chunk(i, o[i:k], a[ja:ea], b[jb:eb])
		i, ja, jb = k, ea, eb
	}
}

// resolveChunk merges one stretch both sides may have changed.
func resolveChunk(o, a, b []string) []string {
	switch {
	case slices.Equal(a, o), slices.Equal(a, b):
		return b
	case slices.Equal(b, o):
		return a
	}
	removedByA := counts(o)
	for _, l := range a {
		if removedByA[l] > 0 {
			removedByA[l]--
		}
	}
	out := make([]string, 0, len(a)+len(b))
	for _, l := range b {
		if removedByA[l] > 0 {
			removedByA[l]--
			continue
		}
		out = append(out, l)
	}
	inOB := counts(o)
	for _, l := range b {
		inOB[l]++
	}
	for _, l := range a {
		if inOB[l] > 0 {
			inOB[l]--
			continue
		}
		out = append(out, l)
	}
	return out
}

func counts(lines []string) map[string]int {
	m := make(map[string]int, len(lines))
	for _, l := range lines {
		m[l]++
	}
	return m
}

// matchLines pairs lines of a with equal lines of b, in order (a common
// subsequence): common ends first, then lines unique to both sides as
// anchors (patience diff), small unanchored stretches by dynamic
// programming. It returns, for each line of a, its index in b or -1.
func matchLines(a, b []string) []int {
	m := make([]int, len(a))
	for i := range m {
		m[i] = -1
	}
	var match func(alo, ahi, blo, bhi int)
	match = func(alo, ahi, blo, bhi int) {
		for alo < ahi && blo < bhi && a[alo] == b[blo] {
			m[alo] = blo
			alo, blo = alo+1, blo+1
		}
		for alo < ahi && blo < bhi && a[ahi-1] == b[bhi-1] {
			ahi, bhi = ahi-1, bhi-1
			m[ahi] = bhi
		}
		if alo == ahi || blo == bhi {
			return
		}
		anchors := uniqueAnchors(a[alo:ahi], b[blo:bhi])
		if len(anchors) == 0 {
			matchSmall(a, b, alo, ahi, blo, bhi, m)
			return
		}
		pa, pb := alo, blo
		for _, an := range anchors {
			match(pa, alo+an[0], pb, blo+an[1])
			m[alo+an[0]] = blo + an[1]
			pa, pb = alo+an[0]+1, blo+an[1]+1
		}
		match(pa, ahi, pb, bhi)
	}
	match(0, len(a), 0, len(b))
	return m
}

// uniqueAnchors returns the longest increasing run of index pairs of lines
// that occur exactly once in a and once in b.
func uniqueAnchors(a, b []string) [][2]int {
	type seen struct{ ia, ib, na, nb int }
	idx := map[string]*seen{}
	for i, l := range a {
		s := idx[l]
		if s == nil {
			s = &seen{ia: i}
			idx[l] = s
		}
		s.na++
	}
	for i, l := range b {
		if s := idx[l]; s != nil {
			s.ib = i
			s.nb++
		}
	}
	var pairs [][2]int
	for _, s := range idx {
		if s.na == 1 && s.nb == 1 {
			pairs = append(pairs, [2]int{s.ia, s.ib})
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return pairs[i][0] < pairs[j][0] })
	return longestIncreasing(pairs)
}

// longestIncreasing returns the longest subsequence of pairs (sorted by
// their first index) whose second index increases (patience sorting).
func longestIncreasing(pairs [][2]int) [][2]int {
	var tails []int // tails[k]: index in pairs of the smallest end of a run of length k+1
	prev := make([]int, len(pairs))
	for i, p := range pairs {
		k := sort.Search(len(tails), func(k int) bool { return pairs[tails[k]][1] >= p[1] })
		prev[i] = -1
		if k > 0 {
			prev[i] = tails[k-1]
		}
		if k == len(tails) {
			tails = append(tails, i)
		} else {
			tails[k] = i
		}
	}
	if len(tails) == 0 {
		return nil
	}
	out := make([][2]int, len(tails))
	for i, k := len(tails)-1, tails[len(tails)-1]; i >= 0; i, k = i-1, prev[k] {
		out[i] = pairs[k]
	}
	return out
}

// matchSmallCells bounds the table of matchSmall; a larger stretch
// without a unique anchor stays unmatched (merged as a whole).
const matchSmallCells = 1 << 18

// matchSmall matches a[alo:ahi] and b[blo:bhi] by a longest common
// subsequence table.
func matchSmall(a, b []string, alo, ahi, blo, bhi int, m []int) {
	n, k := ahi-alo, bhi-blo
	if n*k > matchSmallCells {
		return
	}
	t := make([]int32, (n+1)*(k+1))
	at := func(i, j int) *int32 { return &t[i*(k+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := k - 1; j >= 0; j-- {
			switch {
			case a[alo+i] == b[blo+j]:
				*at(i, j) = *at(i+1, j+1) + 1
			case *at(i+1, j) >= *at(i, j+1):
				*at(i, j) = *at(i+1, j)
			default:
				*at(i, j) = *at(i, j+1)
			}
		}
	}
	for i, j := 0, 0; i < n && j < k; {
		switch {
		case a[alo+i] == b[blo+j]:
			m[alo+i] = blo + j
			i, j = i+1, j+1
		case *at(i+1, j) >= *at(i, j+1):
			i++
		default:
			j++
		}
	}
}

// mergedEntriesAgree checks a merged memory file: each entry is as the
// side that changed it left it (absent if that side removed it), no entry
// was changed by both sides differently, no id occurs twice, and the lines
// outside entries (headings, the topic index) follow the same rule. In
// MEMORY.md, where the section decides what an entry is (core, pending,
// archive), each entry must also stay in the section its side put it in:
// a line merge can otherwise slide memctl's entry under a heading the
// person added, removed or rewrote (CRLF) at the same spot.
func mergedEntriesAgree(path string, old, new, theirs, merged []byte) bool {
	texts, ok := entryTextsOf(path, old, new, theirs, merged)
	if !ok || !sidesAgree(texts[0], texts[1], texts[2], texts[3]) {
		return false
	}
	if path == MainFile && !sidesAgree(entryPlaces(path, old), entryPlaces(path, new), entryPlaces(path, theirs), entryPlaces(path, merged)) {
		return false // an entry came out under another section than its side put it in
	}
	lines := func(src []byte) map[string]string {
		m := map[string]string{}
		for l := range outsideEntries(path, src) {
			m[l] = l
		}
		return m
	}
	return sidesAgree(lines(old), lines(new), lines(theirs), lines(merged))
}

// entryTextsOf is entryTexts of each version of one file, in order; ok is
// false when any of them has a repeated key.
func entryTextsOf(path string, versions ...[]byte) ([]map[string]string, bool) {
	texts := make([]map[string]string, len(versions))
	for i, src := range versions {
		m, ok := entryTexts(path, src)
		if !ok {
			return nil, false
		}
		texts[i] = m
	}
	return texts, true
}

// entryTexts maps each entry of a memory file to its text: by id, or by
// its text for an entry without one. ok is false when a key repeats.
func entryTexts(path string, src []byte) (map[string]string, bool) {
	m := map[string]string{}
	for _, e := range ParseDoc(path, src).Entries {
		key := "id:" + e.ID
		if e.ID == "" {
			key = "text:" + strings.TrimRight(e.Raw, "\r\n")
		}
		if _, dup := m[key]; dup {
			return nil, false
		}
		m[key] = strings.TrimRight(e.Raw, "\r\n")
	}
	return m, true
}

// entryPlaces maps each entry of a memory file (keyed as entryTexts does)
// to the section that holds it.
func entryPlaces(path string, src []byte) map[string]string {
	m := map[string]string{}
	for _, e := range ParseDoc(path, src).Entries {
		key := "id:" + e.ID
		if e.ID == "" {
			key = "text:" + strings.TrimRight(e.Raw, "\r\n")
		}
		m[key] = string(e.Place) + "\x1f" + e.Section
	}
	return m
}

// sidesAgree reports whether got holds, for every key, what a three-way
// merge of o → a and o → b must: the changed side's value (or absence),
// and no key both sides changed differently.
func sidesAgree(o, a, b, got map[string]string) bool {
	keys := map[string]bool{}
	for _, m := range []map[string]string{o, a, b, got} {
		for k := range m {
			keys[k] = true
		}
	}
	for k := range keys {
		ov, inO := o[k]
		av, inA := a[k]
		bv, inB := b[k]
		wantV, wantIn := bv, inB
		switch aChanged, bChanged := inA != inO || av != ov, inB != inO || bv != ov; {
		case aChanged && !bChanged:
			wantV, wantIn = av, inA
		case aChanged && bChanged && (inA != inB || av != bv):
			return false
		}
		gv, inGot := got[k]
		if inGot != wantIn || (wantIn && gv != wantV) {
			return false
		}
	}
	return true
}

// outsideEntries returns the non-blank lines of a memory file that belong
// to no entry.
func outsideEntries(path string, src []byte) map[string]bool {
	d := ParseDoc(path, src)
	out := map[string]bool{}
	i := 0
	for off := 0; off < len(src); {
		end := bytes.IndexByte(src[off:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += off + 1
		}
		for i < len(d.Entries) && d.Entries[i].End <= off {
			i++
		}
		inEntry := i < len(d.Entries) && d.Entries[i].Start <= off && off < d.Entries[i].End
		if l := strings.TrimRight(string(src[off:end]), "\r\n"); !inEntry && strings.TrimSpace(l) != "" {
			out[l] = true
		}
		off = end
	}
	return out
}
