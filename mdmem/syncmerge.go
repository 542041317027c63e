package mdmem

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// The replica merge: how `memctl sync` joins two lines of history of one
// memory (docs/SYNC.md). It is a pure function of the common base and the
// two sides, and it is symmetric by construction: before anything else the
// two sides are put in a canonical order (by a digest of their files), so
// whichever machine merges, and whichever side it calls its own, the result
// is the same bytes. Nothing in it reads a clock or the machine it runs on.
//
// Memory files (MEMORY.md, topics/*.md) merge entry by entry: each file is
// a sequence of items (an entry with an id, or a line), the sequences merge
// three ways, and every id is then decided once for the whole memory
// (mergeDecide). The committed side files merge by their own rules:
// state.json keeps each prefix's larger mark, the consumed ledger and the
// tombstones are unions. Any other file merges only when one side left it
// alone; otherwise the merge stops and names it.

// MergeSide is one side of a replica merge.
type MergeSide struct {
	Files   map[string][]byte // memory-relative path → content: every file of the side's tree
	Machine string            // names the side in a conflict's note ("laptop", or a commit)
}

// MergeInput is a replica merge to make.
type MergeInput struct {
	Base  map[string][]byte // the common ancestor's files (empty: no common history)
	Sides [2]MergeSide
	// Forgotten reports whether a text repeats one of the given
	// tombstone lines (Tombstones.Match with this copy's keys): an entry
	// one side added is checked against the texts only the other side
	// forgot. nil checks nothing.
	Forgotten func(tombstones []byte, text string) bool
}

// MergeResult is the merged memory and what the merge decided.
type MergeResult struct {
	Files map[string][]byte `json:"-"` // the merged tree's files (absent = deleted)
	// Conflicts are the entries both sides edited differently: the newer
	// edit stays, the other waits in Pending under a new id.
	Conflicts []MergeConflict `json:"conflicts,omitempty"`
	Renamed   []MergeRename   `json:"renamed,omitempty"`   // the same id added with different texts on both sides
	Kept      []string        `json:"kept,omitempty"`      // edited on one side, deleted by hand (not forgotten) on the other: kept
	Forgotten []string        `json:"forgotten,omitempty"` // ids removed because one side forgot them
	Dropped   []string        `json:"dropped,omitempty"`   // entries one side added whose text the other side forgot
	Prose     []string        `json:"prose,omitempty"`     // "file:line" where both sides rewrote the same lines outside entries: the base's lines stay
	Other     []string        `json:"other,omitempty"`     // files that are not memory files, changed differently on both sides: the merge refuses
}

// MergeConflict is one entry both sides edited differently.
type MergeConflict struct {
	ID      string `json:"id"`      // the entry that stays live, with the newer edit
	Pending string `json:"pending"` // the other edit, now in Pending confirmation
	Machine string `json:"machine"` // the side the pending edit came from
}

// MergeRename is an id both sides used for different texts: the variant
// with the larger content hash was given a new id.
type MergeRename struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// OtherFileConflictError says a merge stopped on files that are not memory
// files, changed differently on both sides.
type OtherFileConflictError struct{ Paths []string }

func (e *OtherFileConflictError) Error() string {
	return "both sides changed " + strings.Join(e.Paths, ", ") + " differently; memctl merges memory files, not these"
}

// MergeReplicas merges two sides of a memory with their common base.
func MergeReplicas(in MergeInput) (*MergeResult, error) {
	s0, s1 := in.Sides[0], in.Sides[1]
	if d0, d1 := filesDigest(s0.Files), filesDigest(s1.Files); d1 < d0 {
		s0, s1 = s1, s0
	} else if d0 == d1 {
		return &MergeResult{Files: copyFiles(s0.Files)}, nil
	}
	mg := &replicaMerge{base: in.Base, sides: [2]MergeSide{s0, s1}, forgotten: in.Forgotten, res: &MergeResult{Files: map[string][]byte{}}}
	if err := mg.run(); err != nil {
		return nil, err
	}
	return mg.res, nil
}

// filesDigest is a digest of a set of files, for the canonical order.
func filesDigest(files map[string][]byte) string {
	h := sha256.New()
	for _, p := range sortedKeys(files) {
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(files[p]))
		h.Write(files[p])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func copyFiles(m map[string][]byte) map[string][]byte {
	out := make(map[string][]byte, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// isMemoryFile reports whether a path is a memory file (entries).
func isMemoryFile(p string) bool {
	return p == MainFile || strings.HasPrefix(p, TopicDir+"/") && strings.HasSuffix(p, ".md") && !strings.Contains(p[len(TopicDir)+1:], "/")
}

type replicaMerge struct {
	base      map[string][]byte
	sides     [2]MergeSide
	forgotten func([]byte, string) bool
	res       *MergeResult
	known     map[string]bool // every id of the three versions, and every forgotten one
}

func (mg *replicaMerge) run() error {
	paths := map[string]bool{}
	for _, fs := range []map[string][]byte{mg.base, mg.sides[0].Files, mg.sides[1].Files} {
		for p := range fs {
			paths[p] = true
		}
	}
	var mem []string
	for _, p := range sortedKeys(paths) {
		o, inO := mg.base[p]
		a, inA := mg.sides[0].Files[p]
		b, inB := mg.sides[1].Files[p]
		switch {
		case isMemoryFile(p):
			mem = append(mem, p)
			continue
		case p == TombstonesPath:
			mg.put(p, unionLines(a, b, tombstoneLineKey))
			continue
		case strings.HasPrefix(p, LedgerDir+"/"):
			mg.put(p, unionLines(a, b, ledgerLineKey))
			continue
		case p == PurgesPath:
			mg.put(p, unionLines(a, b, func(l string) string { return l }))
			continue
		}
		switch {
		case inA == inB && bytes.Equal(a, b):
			mg.putIf(p, a, inA)
		case inO == inA && bytes.Equal(o, a):
			mg.putIf(p, b, inB)
		case inO == inB && bytes.Equal(o, b):
			mg.putIf(p, a, inA)
		case p == StatePath && inA && inB:
			st, ok := mergeState(o, a, b)
			if !ok {
				mg.res.Other = append(mg.res.Other, p)
				continue
			}
			mg.put(p, st)
		case inO && inA && inB:
			// A text file both sides changed: line by line, when they
			// changed different lines (two settings of config.toml).
			if merged, ok := mergeTextLines(o, a, b); ok {
				mg.put(p, merged)
				continue
			}
			mg.res.Other = append(mg.res.Other, p)
		default:
			mg.res.Other = append(mg.res.Other, p)
		}
	}
	if len(mg.res.Other) > 0 {
		return &OtherFileConflictError{Paths: mg.res.Other}
	}
	return mg.mergeMemory(mem)
}

func (mg *replicaMerge) put(p string, data []byte) {
	if data != nil {
		mg.res.Files[p] = data
	}
}

func (mg *replicaMerge) putIf(p string, data []byte, in bool) {
	if in {
		mg.res.Files[p] = data
	}
}

// unionLines is the union of two line files, one line per key: the first
// side's lines in their order, then the lines of the other side whose key
// it lacks (the sides are in canonical order, so this is symmetric; the
// files are append-only, so a side that holds everything comes out as it
// was).
func unionLines(a, b []byte, key func(string) string) []byte {
	if a == nil && b == nil {
		return nil
	}
	seen := map[string]bool{}
	var out bytes.Buffer
	for _, src := range [][]byte{a, b} {
		for _, l := range strings.SplitAfter(string(src), "\n") {
			t := strings.TrimRight(l, "\r\n")
			if strings.TrimSpace(t) == "" || seen[key(t)] {
				continue
			}
			seen[key(t)] = true
			out.WriteString(t)
			if strings.HasSuffix(l, "\r\n") {
				out.WriteString("\r\n")
			} else {
				out.WriteString("\n")
			}
		}
	}
	return out.Bytes()
}

// mergeTextLines merges a text file line by line; ok is false where both
// sides changed the same lines, or inserted different lines at one place.
func mergeTextLines(o, a, b []byte) ([]byte, bool) {
	var out []byte
	ok := true
	merge3Walk(splitLines(o), splitLines(a), splitLines(b), func(l string) { out = append(out, l...) }, func(_ int, co, ca, cb []string) {
		var chunk []string
		switch {
		case slices.Equal(ca, co), slices.Equal(ca, cb):
			chunk = cb
		case slices.Equal(cb, co):
			chunk = ca
		default:
			ok = false
		}
		for _, l := range chunk {
			out = append(out, l...)
		}
	})
	if !ok {
		return nil, false
	}
	return out, true
}

// ledgerLineKey keys a ledger line by its candidate id.
func ledgerLineKey(l string) string {
	id, _, _ := strings.Cut(l, " ")
	return id
}

// tombstoneLineKey keys a tombstone by its id and hash.
func tombstoneLineKey(l string) string {
	var ts Tombstone
	if json.Unmarshal([]byte(l), &ts) != nil || ts.ID == "" {
		return "~" + l // not a tombstone: kept as it is
	}
	return ts.ID + "\x00" + ts.Hash
}

// mergeItem is one item of a memory file: an entry with an id, or a line
// (an entry without an id is its lines).
type mergeItem struct {
	key  string // "id:<id>" or "l:<line>"
	text string // the bytes: the entry's raw item, or the line
}

// entryAt is one version of an entry: its item and where it is.
type entryAt struct {
	e       *Entry
	raw     string
	file    string
	section string // the heading the entry is under (place\x1fsection)
}

// fileItems splits a memory file into items, and maps each id to its
// entry. An id twice in one file is an error.
func fileItems(path string, src []byte, ids map[string]*entryAt) ([]mergeItem, error) {
	d := ParseDoc(path, src)
	var items []mergeItem
	off := 0
	lines := func(end int) {
		for _, l := range splitLines(src[off:end]) {
			items = append(items, mergeItem{key: "l:" + l, text: l})
		}
		off = end
	}
	for _, e := range d.Entries {
		if e.ID == "" {
			continue
		}
		lines(e.Start)
		if prev, dup := ids[e.ID]; dup {
			return nil, fmt.Errorf("%s:%d: %s is also at %s; give one of them another id (memctl lint lists repeated ids)", path, e.Line, e.ID, prev.file)
		}
		ids[e.ID] = &entryAt{e: e, raw: e.Raw, file: path, section: string(e.Place) + "\x1f" + e.Section}
		items = append(items, mergeItem{key: "id:" + e.ID, text: e.Raw})
		off = e.End
	}
	lines(len(src))
	return items, nil
}

// mergeKeys merges three sequences of item keys. Where only one side
// changed a stretch, its version wins. Where both did: an insertion by
// both keeps both (side 0's first; the sides are in canonical order); a
// stretch of lines both rewrote differently keeps the base's lines (ok
// false), with every entry any version holds there (their fate is decided
// per id, not here).
func mergeKeys(o, a, b []string) (out []string, proseAt []int) {
	merge3Walk(o, a, b, func(k string) { out = append(out, k) }, func(at int, o, a, b []string) {
		chunk, prose := mergeChunk(o, a, b)
		if prose {
			proseAt = append(proseAt, at)
		}
		out = append(out, chunk...)
	})
	return out, proseAt
}

// mergeChunk merges one stretch both sides may have changed (see
// mergeKeys).
func mergeChunk(o, a, b []string) ([]string, bool) {
	switch {
	case slices.Equal(a, o), slices.Equal(a, b):
		return b, false
	case slices.Equal(b, o):
		return a, false
	}
	inO := map[string]bool{}
	for _, k := range o {
		inO[k] = true
	}
	inA, inB := map[string]bool{}, map[string]bool{}
	for _, k := range a {
		inA[k] = true
	}
	for _, k := range b {
		inB[k] = true
	}
	linesChanged := func(side []string, in map[string]bool) (added, removed bool) {
		for _, k := range side {
			if strings.HasPrefix(k, "l:") && !inO[k] && strings.TrimSpace(k[2:]) != "" {
				added = true
			}
		}
		for _, k := range o {
			if strings.HasPrefix(k, "l:") && !in[k] && strings.TrimSpace(k[2:]) != "" {
				removed = true
			}
		}
		return added, removed
	}
	addA, remA := linesChanged(a, inA)
	addB, remB := linesChanged(b, inB)
	prose := addA && addB && (remA || remB) || addA && remB || addB && remA
	var out []string
	seen := map[string]bool{}
	emit := func(k string) {
		if strings.HasPrefix(k, "id:") {
			if seen[k] {
				return
			}
			seen[k] = true
		}
		out = append(out, k)
	}
	for _, k := range o {
		switch {
		case strings.HasPrefix(k, "id:"), prose:
			emit(k)
		case inA[k] && inB[k]:
			emit(k)
		}
	}
	for si, side := range [][]string{a, b} {
		for _, k := range side {
			if inO[k] {
				continue
			}
			if strings.HasPrefix(k, "l:") && (prose || si == 1 && inA[k]) {
				continue // rewritten prose keeps the base; a line both added, once
			}
			emit(k)
		}
	}
	return out, prose
}

// decision is the fate of one id in the merged memory.
type decision struct {
	keep    bool
	raw     string // the item to write
	file    string
	section string
	from    int    // the version whose sequence places it when the merge did not (-1 base, 0, 1)
	origID  string // for a renamed variant, the id it had on its side
	twice   bool   // both sides moved it differently: placed only in the section decided
}

func (mg *replicaMerge) mergeMemory(paths []string) error {
	var ids [3]map[string]*entryAt
	var items [3]map[string][]mergeItem
	versions := [3]map[string][]byte{mg.base, mg.sides[0].Files, mg.sides[1].Files}
	for v := range versions {
		ids[v], items[v] = map[string]*entryAt{}, map[string][]mergeItem{}
		for _, p := range paths {
			src, ok := versions[v][p]
			if !ok {
				continue
			}
			its, err := fileItems(p, src, ids[v])
			if err != nil {
				return fmt.Errorf("%s: %w", [3]string{"the base", mg.sides[0].Machine, mg.sides[1].Machine}[v], err)
			}
			items[v][p] = its
		}
	}
	tombs := tombstoneIDs(mg.res.Files[TombstonesPath])
	// forgotBy[s]: the tombstone lines only side s holds. A line, not an
	// id: two machines may each forget one id, each in its own version
	// of the text (seed 2032: a text forgotten on one machine was added
	// again on the other, which had forgotten the id's other version).
	var forgotBy [2][]byte
	for s := range 2 {
		other := mg.sides[1-s].Files[TombstonesPath]
		own := map[string]bool{}
		for _, l := range bytes.Split(mg.sides[s].Files[TombstonesPath], []byte("\n")) {
			own[string(bytes.TrimSpace(l))] = true
		}
		var fresh [][]byte
		for _, l := range bytes.Split(other, []byte("\n")) {
			var ts Tombstone
			if json.Unmarshal(l, &ts) == nil && ts.ID != "" && !own[string(bytes.TrimSpace(l))] {
				fresh = append(fresh, l)
			}
		}
		if len(fresh) > 0 && mg.forgotten != nil {
			forgotBy[1-s] = append(bytes.Join(fresh, []byte("\n")), '\n')
		}
	}

	// Decide every id once, for the whole memory.
	all := map[string]bool{}
	for v := range ids {
		for id := range ids[v] {
			all[id] = true
		}
	}
	mg.known = maps.Clone(all)
	maps.Copy(mg.known, tombs)
	dec := map[string]*decision{}
	var pendings []*Entry
	for _, id := range sortedKeys(all) {
		if dec[id] != nil {
			continue // a renamed variant's new id, decided with its original
		}
		pendings = append(pendings, mg.decide(dec, id, ids[0][id], [2]*entryAt{ids[1][id], ids[2][id]}, tombs, forgotBy)...)
	}

	// Merge each file's sequence and write the decided entries.
	placed := map[string]bool{}
	out := map[string][]mergeItem{}
	for _, p := range paths {
		var keys [3][]string
		for v := range 3 {
			for _, it := range items[v][p] {
				keys[v] = append(keys[v], it.key)
			}
		}
		merged, prose := mergeKeys(keys[0], keys[1], keys[2])
		for _, at := range prose {
			line := 1
			for _, it := range items[0][p][:at] {
				line += strings.Count(it.text, "\n")
			}
			mg.res.Prose = append(mg.res.Prose, fmt.Sprintf("%s:%d", p, line))
		}
		var its []mergeItem
		section := ""
		for _, k := range merged {
			if l, ok := strings.CutPrefix(k, "l:"); ok {
				if h := headingOf(l); h != "" {
					section = h
				}
				its = append(its, mergeItem{key: k, text: l})
				continue
			}
			id := k[3:]
			d := dec[id]
			if !d.keep || d.file != p || placed[id] {
				continue
			}
			if d.twice && !strings.HasSuffix(d.section, "\x1f"+section) {
				continue // moved differently on both sides: placed in the section decided
			}
			placed[id] = true
			its = append(its, mergeItem{key: k, text: d.raw})
		}
		out[p] = its
	}
	// Entries the sequences did not place (kept against a hand delete,
	// renamed variants, moved on both sides): after their predecessor in
	// the sequence of the side they come from.
	for _, id := range sortedKeys(dec) {
		d := dec[id]
		if !d.keep || placed[id] {
			continue
		}
		v := d.from + 1
		seq := items[v][d.file]
		anchor := ""
		origKey := "id:" + id
		if d.origID != "" {
			origKey = "id:" + d.origID
		}
		for _, it := range seq {
			if it.key == origKey {
				break
			}
			anchor = it.key
		}
		its := out[d.file]
		at := len(its)
		if anchor != "" {
			for i, it := range its {
				if it.key == anchor || (strings.HasPrefix(anchor, "id:") && it.key == anchor) {
					at = i + 1
				}
			}
		}
		ins := mergeItem{key: "id:" + id, text: d.raw}
		its = append(its[:at], append([]mergeItem{ins}, its[at:]...)...)
		out[d.file] = its
		placed[id] = true
	}
	for _, p := range paths {
		its := out[p]
		var b strings.Builder
		for _, it := range its {
			b.WriteString(it.text)
		}
		_, inA := mg.sides[0].Files[p]
		_, inB := mg.sides[1].Files[p]
		_, inO := mg.base[p]
		if b.Len() == 0 && (!inA || !inB) && (inO || !inA && !inB) {
			continue // a file one side deleted and nothing is left in
		}
		if b.Len() == 0 && !inA && !inB {
			continue
		}
		mg.res.Files[p] = []byte(b.String())
	}
	if len(pendings) > 0 {
		if err := mg.addPending(pendings); err != nil {
			return err
		}
	}
	return mg.check(ids, tombs)
}

// headingOf returns an ATX heading's title, or "".
func headingOf(l string) string {
	t := strings.TrimLeft(l, " ")
	if !strings.HasPrefix(t, "#") {
		return ""
	}
	return strings.TrimSpace(strings.TrimLeft(t, "#"))
}

// tombstoneIDs returns the ids a tombstone file names.
func tombstoneIDs(data []byte) map[string]bool {
	out := map[string]bool{}
	for _, l := range bytes.Split(data, []byte("\n")) {
		var ts Tombstone
		if json.Unmarshal(l, &ts) == nil && ts.ID != "" {
			out[ts.ID] = true
		}
	}
	return out
}

// placeRank orders the places an entry can be moved to when both sides
// moved it differently: the more cautious place wins.
func placeRank(section string) int {
	place, _, _ := strings.Cut(section, "\x1f")
	switch Place(place) {
	case PlacePending:
		return 4
	case PlaceArchive:
		return 3
	case PlaceTopic:
		return 2
	case PlaceCore:
		return 1
	}
	return 0
}

// locWins reports whether location a wins over b (both sides moved an
// entry differently): pending > archive > topic > core, then path order.
func locWins(a, b *entryAt) bool {
	if ra, rb := placeRank(a.section), placeRank(b.section); ra != rb {
		return ra > rb
	}
	if a.file != b.file {
		return a.file < b.file
	}
	return a.section < b.section
}

func sameLoc(a, b *entryAt) bool { return a.file == b.file && a.section == b.section }

func rawHash(raw string) string {
	h := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(h[:])
}

// decide sets the fate of one id: dec[id] and, for a renamed variant, the
// new id's; it returns the conflicting edits that go to Pending.
func (mg *replicaMerge) decide(dec map[string]*decision, id string, b *entryAt, sides [2]*entryAt, tombs map[string]bool, forgotBy [2][]byte) []*Entry {
	keepAt := func(s int, x *entryAt) *decision {
		return &decision{keep: true, raw: x.raw, file: x.file, section: x.section, from: s}
	}
	if tombs[id] {
		if b != nil || sides[0] != nil || sides[1] != nil {
			mg.res.Forgotten = append(mg.res.Forgotten, id)
		}
		dec[id] = &decision{}
		return nil
	}
	in0, in1 := sides[0] != nil, sides[1] != nil
	if b == nil {
		switch {
		case in0 && in1 && sides[0].raw == sides[1].raw:
			w := 0
			if !sameLoc(sides[0], sides[1]) && locWins(sides[1], sides[0]) {
				w = 1
			}
			d := keepAt(w, sides[w])
			d.twice = !sameLoc(sides[0], sides[1])
			dec[id] = d
		case in0 && in1:
			// The same id for two texts: the smaller content hash keeps it.
			w := 0
			if rawHash(sides[1].raw) < rawHash(sides[0].raw) {
				w = 1
			}
			dec[id] = keepAt(w, sides[w])
			l := sides[1-w]
			nid := DerivedID(prefixOf(id), []byte("rename\x00"+id+"\x00"+l.raw))
			if mg.known[nid] {
				// An earlier merge renamed this very text (a derived id
				// is the same on every machine): that entry is decided
				// on its own, kept, edited or forgotten since.
				return nil
			}
			d := keepAt(1-w, l)
			d.raw, d.origID = withID(l, nid), id
			dec[nid] = d
			mg.res.Renamed = append(mg.res.Renamed, MergeRename{From: id, To: nid})
		default:
			s := 0
			if in1 {
				s = 1
			}
			if ts := forgotBy[1-s]; ts != nil {
				if mg.forgotten(ts, sides[s].e.Content) {
					mg.res.Dropped = append(mg.res.Dropped, id)
					dec[id] = &decision{}
					return nil
				}
			}
			dec[id] = keepAt(s, sides[s])
		}
		return nil
	}
	switch {
	case !in0 && !in1:
		dec[id] = &decision{}
		return nil
	case !in0 || !in1:
		s := 0
		if in1 {
			s = 1
		}
		x := sides[s]
		if x.raw == b.raw && sameLoc(x, b) {
			dec[id] = &decision{} // deleted by hand on the other side, untouched here
			return nil
		}
		// A deletion whose text is forgotten (an earlier merge dropped an
		// entry that repeated a forgotten text) is a forget: an edit on
		// the other side does not bring it back.
		if mg.forgottenText(x.e.Content) {
			mg.res.Dropped = append(mg.res.Dropped, id)
			dec[id] = &decision{}
			return nil
		}
		mg.res.Kept = append(mg.res.Kept, id)
		dec[id] = keepAt(s, x)
		return nil
	}
	o, t := sides[0], sides[1]
	// Where: the side that moved it; both moved it differently: the more
	// cautious place.
	loc, from, twice := o, 0, false
	switch {
	case sameLoc(o, b):
		loc, from = t, 1
	case sameLoc(t, b), sameLoc(o, t):
	default:
		twice = true
		if locWins(t, o) {
			loc, from = t, 1
		}
	}
	d := &decision{keep: true, file: loc.file, section: loc.section, from: from, twice: twice}
	dec[id] = d
	switch {
	case o.raw == b.raw:
		d.raw = t.raw
	case t.raw == b.raw, o.raw == t.raw:
		d.raw = o.raw
	default:
		if e, ok := mergeEntryFields(b.e, o.e, t.e); ok {
			d.raw = renderLike(e, sides[from])
			return nil
		}
		// Both edited it differently: the newer edit stays, the other
		// waits in Pending under a new id, naming its machine.
		w := 0
		if newer(t.e, o.e) || !newer(o.e, t.e) && rawHash(t.raw) < rawHash(o.raw) {
			w = 1
		}
		d.raw = sides[w].raw
		l := sides[1-w]
		p := cloneForPending(l.e)
		p.ID = DerivedID(prefixOf(id), []byte("conflict\x00"+id+"\x00"+l.raw))
		if mg.known[p.ID] {
			// An earlier merge met this very conflict (a derived id is
			// the same on every machine) and put this edit in Pending:
			// it waits there, or a person settled it since (confirmed,
			// rejected, forgotten). It is not put back (seed 1200).
			return nil
		}
		if mg.forgottenText(p.Content) {
			// The losing edit's text was forgotten (an earlier copy of
			// this conflict, forgotten under another id): forget wins
			// over edits, so it does not wait in Pending again.
			return nil
		}
		machine := mg.sides[1-w].Machine
		p.Notes = append(p.Notes, "conflicts with "+id+": edited differently on "+machine)
		mg.res.Conflicts = append(mg.res.Conflicts, MergeConflict{ID: id, Pending: p.ID, Machine: machine})
		return []*Entry{p}
	}
	return nil
}

// forgottenText reports whether a tombstone of the merged memory (either
// side's) covers text.
func (mg *replicaMerge) forgottenText(text string) bool {
	all := mg.res.Files[TombstonesPath]
	return mg.forgotten != nil && len(all) > 0 && mg.forgotten(all, text)
}

// newer reports whether a was edited after b (updated, else created).
func newer(a, b *Entry) bool {
	ta, tb := a.Updated, b.Updated
	if ta.IsZero() {
		ta = a.Created
	}
	if tb.IsZero() {
		tb = b.Created
	}
	return ta.After(tb)
}

func prefixOf(id string) string {
	if i := strings.LastIndexByte(id, '-'); i > 0 {
		return id[:i]
	}
	return id
}

// withID is an entry's item with another id.
func withID(x *entryAt, id string) string {
	old := "[" + x.e.ID + "]"
	i := strings.Index(x.raw, old)
	if i < 0 {
		return x.raw
	}
	return x.raw[:i] + "[" + id + "]" + x.raw[i+len(old):]
}

// renderLike renders a merged entry as its side wrote it: marker and line
// ending.
func renderLike(e *Entry, x *entryAt) string {
	marker := x.e.Marker
	if marker == "" {
		marker = "- "
	}
	out := e.renderWith(marker)
	if strings.HasSuffix(x.raw, "\r\n") {
		out = strings.TrimSuffix(out, "\n") + "\r\n"
	}
	return out
}

// cloneForPending copies an entry's fields for an insert into Pending.
func cloneForPending(e *Entry) *Entry {
	c := &Entry{ID: e.ID, Category: e.Category, Content: e.Content, Source: e.Source, Created: e.Created, Updated: e.Updated,
		Expires: e.Expires, Confidence: e.Confidence, HasConf: e.HasConf, SupersededBy: "", Scope: append([]string(nil), e.Scope...),
		Refs: append([]string(nil), e.Refs...), Tags: append([]string(nil), e.Tags...), See: append([]string(nil), e.See...),
		Notes: append([]string(nil), e.Notes...)}
	return c
}

// mergeEntryFields merges two edits of one entry field by field: a field
// one side changed takes that change; updated takes the later date; refs,
// tags, see and notes take the union. ok is false when both sides changed
// a field (the text, the source, the scope…) differently, or an entry has
// nested content.
func mergeEntryFields(b, o, t *Entry) (*Entry, bool) {
	if b.Nested || o.Nested || t.Nested {
		return nil, false
	}
	ok := true
	str := func(bv, ov, tv string) string {
		switch {
		case ov == bv:
			return tv
		case tv == bv, ov == tv:
			return ov
		}
		ok = false
		return ov
	}
	tm := func(bv, ov, tv time.Time) time.Time {
		return parseTimeOr(str(FormatTime(bv), FormatTime(ov), FormatTime(tv)))
	}
	e := &Entry{ID: o.ID, Category: str(b.Category, o.Category, t.Category)}
	e.Content = str(b.Content, o.Content, t.Content)
	e.Source = str(b.Source, o.Source, t.Source)
	e.Created = tm(b.Created, o.Created, t.Created)
	e.Expires = tm(b.Expires, o.Expires, t.Expires)
	e.Scope = splitList(str(strings.Join(b.Scope, ","), strings.Join(o.Scope, ","), strings.Join(t.Scope, ",")))
	conf := func(x *Entry) string {
		if !x.HasConf {
			return ""
		}
		return fmt.Sprint(x.Confidence)
	}
	if c := str(conf(b), conf(o), conf(t)); c != "" {
		e.HasConf = true
		fmt.Sscan(c, &e.Confidence)
	}
	e.SupersededBy = str(b.SupersededBy, o.SupersededBy, t.SupersededBy)
	e.SupersededOn = tm(b.SupersededOn, o.SupersededOn, t.SupersededOn)
	e.Updated = o.Updated
	if t.Updated.After(e.Updated) {
		e.Updated = t.Updated
	}
	union := func(bv, ov, tv []string) []string {
		// a value one side removed stays removed; the rest is the union
		var out []string
		seen := map[string]bool{}
		inB := map[string]bool{}
		for _, v := range bv {
			inB[v] = true
		}
		has := func(list []string, v string) bool {
			for _, x := range list {
				if x == v {
					return true
				}
			}
			return false
		}
		for _, list := range [][]string{ov, tv} {
			for _, v := range list {
				if seen[v] || inB[v] && (!has(ov, v) || !has(tv, v)) {
					continue
				}
				seen[v] = true
				out = append(out, v)
			}
		}
		return out
	}
	e.Refs, e.Tags, e.See, e.Notes = union(b.Refs, o.Refs, t.Refs), union(b.Tags, o.Tags, t.Tags), union(b.See, o.See, t.See), union(b.Notes, o.Notes, t.Notes)
	return e, ok
}

func parseTimeOr(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, _ := ParseTime(s)
	return t
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// addPending inserts the conflicting edits into MEMORY.md's Pending
// confirmation.
func (mg *replicaMerge) addPending(pend []*Entry) error {
	if _, ok := mg.res.Files[MainFile]; !ok {
		return fmt.Errorf("a conflicting edit waits in MEMORY.md's Pending confirmation, and the merge was not given MEMORY.md")
	}
	m := &Memory{Main: ParseDoc(MainFile, mg.res.Files[MainFile]), Topics: map[string]*Doc{}}
	m.reindex()
	ed := m.Edit()
	ed.SetMaxBytes(MaxFileBytes)
	sort.Slice(pend, func(i, j int) bool { return pend[i].ID < pend[j].ID })
	for _, e := range pend {
		if err := ed.Insert(e, Target{Place: PlacePending}); err != nil {
			return err
		}
	}
	changed, err := ed.Changed()
	if err != nil {
		return err
	}
	for p, data := range changed {
		mg.res.Files[p] = data
	}
	return nil
}

// check verifies the merged memory before it is committed: every file
// parses without a repeated id, no conflict marker, and every id live on
// either side is still there unless it was forgotten, dropped as a
// forgotten text, or renamed.
func (mg *replicaMerge) check(ids [3]map[string]*entryAt, tombs map[string]bool) error {
	got := map[string]string{}
	for _, p := range sortedKeys(mg.res.Files) {
		if !isMemoryFile(p) {
			continue
		}
		src := mg.res.Files[p]
		if l, ok := conflictMarkerLine(src); ok {
			return fmt.Errorf("merge check: %s:%d holds a conflict marker", p, l)
		}
		for _, e := range ParseDoc(p, src).Entries {
			if e.ID == "" {
				continue
			}
			if prev, dup := got[e.ID]; dup {
				return fmt.Errorf("merge check: %s is in %s and %s", e.ID, prev, p)
			}
			got[e.ID] = p
		}
	}
	dropped := map[string]bool{}
	for _, id := range mg.res.Dropped {
		dropped[id] = true
	}
	for s := 1; s <= 2; s++ {
		for id := range ids[s] {
			if _, ok := got[id]; !ok && !tombs[id] && !dropped[id] {
				if ids[0][id] != nil && (ids[3-s][id] == nil) {
					continue // deleted by hand on the other side
				}
				return fmt.Errorf("merge check: %s was lost", id)
			}
		}
	}
	return nil
}

// conflictMarkerLine returns the line of the first git conflict marker.
func conflictMarkerLine(src []byte) (int, bool) {
	for i, l := range strings.Split(string(src), "\n") {
		for _, m := range []string{"<<<<<<< ", ">>>>>>> ", "=======", "||||||| "} {
			if strings.HasPrefix(l, m) && (m != "=======" || strings.TrimRight(l, "\r") == m) {
				return i + 1, true
			}
		}
	}
	return 0, false
}

// MergeFile is the replica merge of one file, for git's merge driver
// (memctl merge-file, registered by memctl sync --install-merge-driver):
// base, ours and theirs are the file's three versions (nil: absent). ok is
// false when the file cannot be merged on its own: a conflicting edit in a
// topic file (its Pending variant belongs in MEMORY.md), a file both sides
// changed that is not a memory file, or versions that do not parse.
func MergeFile(path string, base, ours, theirs []byte) (merged []byte, ok bool) {
	side := func(b []byte) map[string][]byte {
		if b == nil {
			return map[string][]byte{}
		}
		return map[string][]byte{path: b}
	}
	res, err := MergeReplicas(MergeInput{Base: side(base), Sides: [2]MergeSide{{Files: side(ours), Machine: "ours"}, {Files: side(theirs), Machine: "theirs"}}})
	if err != nil {
		return nil, false
	}
	for p := range res.Files {
		if p != path {
			return nil, false // a Pending variant for MEMORY.md out of a topic file
		}
	}
	out, has := res.Files[path]
	if !has {
		return []byte{}, true
	}
	return out, true
}
