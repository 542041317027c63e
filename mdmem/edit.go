package mdmem

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"maps"
	"math"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// splice replaces Src[start:end] with text. Inserts have start == end.
type splice struct {
	start, end int
	text       string
	seq        int
}

// Editor collects entry edits against a loaded Memory and applies them in
// one pass per file, splicing bytes so that everything it was not asked to
// change stays byte-identical. Offsets always refer to the sources as
// loaded; an Editor is used once.
type Editor struct {
	m        *Memory
	splices  map[string][]splice // by memory-relative path
	created  map[string]*fileBuf // new topic files, by slug
	titles   map[string]string   // topic slug → title for new topic files
	removed  map[*Entry]bool
	inserted []string
	seq      int
	// pending headings created in this edit, so two inserts share one
	newHeads   map[string]*strings.Builder
	children   map[string][]string // new H1 key → its new H2 titles (one heading, not one per subsection)
	blankAfter map[string]string   // newHeads key → blank line to add after it
	atCount    map[string]int      // items inserted per offset, to number lists

	// Splitting topic files at maxBytes (files.max_bytes).
	maxBytes int
	grow     map[string]int    // bytes inserted into an existing file, by path
	items    map[string]int    // items written into a created topic file, by slug
	last     map[string]string // topic base slug → the part that takes inserts
	partBase map[string]string // part slug created by this edit → its base

	spill *spill // where created topic files go as they fill (SpillTo)
}

// Edit starts a batch of edits on m.
func (m *Memory) Edit() *Editor {
	return &Editor{m: m, splices: map[string][]splice{}, created: map[string]*fileBuf{},
		titles: map[string]string{}, removed: map[*Entry]bool{}, newHeads: map[string]*strings.Builder{},
		blankAfter: map[string]string{}, atCount: map[string]int{}, children: map[string][]string{}, maxBytes: DefaultMaxWriteBytes,
		grow: map[string]int{}, items: map[string]int{}, last: map[string]string{}, partBase: map[string]string{}}
}

// SetMaxBytes sets the size up to which a topic file takes inserts
// (files.max_bytes; n ≤ 0 keeps DefaultMaxWriteBytes). An insert that
// would take a topic file past it goes to the topic's next part,
// topics/<slug>-2.md, -3, …, each listed in the topic index; and Changed
// refuses a MEMORY.md grown past it.
func (ed *Editor) SetMaxBytes(n int) {
	if n > 0 {
		ed.maxBytes = n
	}
}

func (ed *Editor) add(path string, start, end int, text string) {
	ed.seq++
	ed.splices[path] = append(ed.splices[path], splice{start, end, text, ed.seq})
}

// Target says where Insert puts an entry.
type Target struct {
	Place Place  // PlaceCore (by the entry's category), PlacePending, PlaceArchive or PlaceTopic
	Topic string // topic slug, for PlaceTopic
}

// TargetFor is the default place of an entry: its core section for core
// categories without a topic, else its topic file (the topic, or the
// category name when it has none).
func TargetFor(e *Entry, topic string) Target {
	if c, ok := CategoryByName(e.Category); ok && c.Core && topic == "" {
		return Target{Place: PlaceCore}
	}
	if topic == "" {
		topic = e.Category
	}
	return Target{Place: PlaceTopic, Topic: topic}
}

// Remove deletes an entry's lines (nested content included).
func (ed *Editor) Remove(e *Entry) {
	ed.removed[e] = true
	ed.add(e.File, e.Start, e.End, "")
}

// Replace rewrites an entry in place from its fields. Nested content under
// the item (continuation blocks, sub-lists) is kept.
func (ed *Editor) Replace(old *Entry, e *Entry) {
	doc := ed.m.Doc(old.File)
	ed.add(old.File, old.Start, old.HeadEnd, ed.renderFor(doc, e, old.Marker))
}

// Move removes old and inserts e at t, carrying old's nested content.
func (ed *Editor) Move(old *Entry, e *Entry, t Target) error {
	if _, err := ed.insert(e, t, nestedOf(ed.m.Doc(old.File), old)); err != nil {
		return err
	}
	ed.Remove(old)
	return nil
}

// Insert adds a new entry at t.
func (ed *Editor) Insert(e *Entry, t Target) error {
	_, err := ed.insert(e, t, "")
	return err
}

// InsertAt is Insert that also returns the memory-relative path of the
// file the entry goes to (for a topic, the part that takes it).
func (ed *Editor) InsertAt(e *Entry, t Target) (string, error) { return ed.insert(e, t, "") }

func nestedOf(doc *Doc, e *Entry) string {
	if doc == nil || e.HeadEnd >= e.End {
		return ""
	}
	return strings.ReplaceAll(string(doc.Src[e.HeadEnd:e.End]), "\r\n", "\n")
}

// renderFor renders e behind marker with the line ending the document uses.
func (ed *Editor) renderFor(doc *Doc, e *Entry, marker string) string {
	if marker == "" || strings.ContainsAny(marker, "\r\n") {
		marker = "- "
	}
	line := e.renderWith(marker)
	if doc != nil && usesCRLF(doc.Src) {
		line = strings.ReplaceAll(line, "\n", "\r\n")
	}
	return line
}

func usesCRLF(src []byte) bool {
	i := bytes.IndexByte(src, '\n')
	return i > 0 && src[i-1] == '\r'
}

// ErrNoCoreHeading is returned by an insertion into the core (or Pending
// confirmation) of a MEMORY.md whose core subsections stand under no
// "# Core profile" heading: memctl refuses rather than add a second core.
var ErrNoCoreHeading = errors.New("the core profile has lost its heading")

func (ed *Editor) insert(e *Entry, t Target, nested string) (string, error) {
	item := pendingItem{e: e, nested: nested}
	switch t.Place {
	case PlaceTopic:
		if err := ValidSlug(t.Topic); err != nil {
			return "", err
		}
		return ed.insertTopic(t.Topic, item), nil
	case PlaceCore, PlacePending:
		h2 := TitlePending
		if t.Place == PlaceCore {
			c, ok := CategoryByName(e.Category)
			if !ok || !c.Core {
				return "", fmt.Errorf("entry %s: category %q has no core section", e.ID, e.Category)
			}
			h2 = c.Heading
		}
		if h := ed.m.Main.orphanCore(); h != nil {
			return "", fmt.Errorf("%w: %s line %d has %q but no \"# %s\" heading above it; memctl does not add a second core: name that section \"# %s\" (memctl lint)", ErrNoCoreHeading, MainFile, h.Line, h.Title, TitleCore, TitleCore)
		}
		ed.insertMain(TitleCore, h2, item)
	case PlaceArchive:
		ed.insertMain(TitleArchive, "", item)
	default:
		return "", fmt.Errorf("cannot insert into place %q", t.Place)
	}
	ed.inserted = append(ed.inserted, e.ID)
	return MainFile, nil
}

// pendingItem is an entry (or a raw line, for the topic index) to insert.
type pendingItem struct {
	e      *Entry
	nested string
	raw    string
}

// text renders the item behind the marker that continues the list whose
// last item is prev (nil: a new list), numbering ordered lists on from
// next.
func (it pendingItem) text(prev *Entry, n int) string {
	marker := "- "
	if prev != nil {
		marker = nextMarker(prev.Marker, n)
	}
	if it.e == nil {
		return marker + strings.TrimPrefix(it.raw, "- ")
	}
	return it.e.renderWith(marker) + it.nested
}

// nextMarker continues a list: the same bullet, or the ordered number
// plus n.
func nextMarker(marker string, n int) string {
	if marker == "" || strings.ContainsAny(marker, "\r\n") {
		return "- "
	}
	indent := marker[:len(marker)-len(strings.TrimLeft(marker, " \t"))]
	rest := strings.TrimLeft(marker, " \t")
	digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
	if digits == 0 || digits > 9 || len(rest) <= digits {
		return marker
	}
	num := 0
	for _, c := range rest[:digits] {
		num = num*10 + int(c-'0')
	}
	return fmt.Sprintf("%s%d%c ", indent, num+n, rest[digits])
}

// SetTopicTitle sets the title (H1 and index line) used if the topic file
// is created by this edit.
func (ed *Editor) SetTopicTitle(slug, title string) { ed.titles[slug] = OneLine(title) }

// insertTopic appends item to topic slug, or to the part of the topic
// that has room for it, and returns the path of that file.
func (ed *Editor) insertTopic(slug string, item pendingItem) string {
	text := item.text(nil, 0)
	slug = ed.topicFile(slug, len(text))
	doc := ed.m.Topics[slug]
	if doc == nil {
		b := ed.created[slug]
		if b == nil {
			b = &fileBuf{spill: ed.spill}
			title := ed.titles[slug]
			if title == "" {
				title = defaultTitle(slug)
			}
			b.add("# "+title+"\n\n", ed.maxBytes)
			ed.created[slug] = b
			ed.indexTopic(slug, title)
		}
		b.add(text, ed.maxBytes)
		b.inserted(item.e.ID)
		ed.items[slug]++
		return TopicPath(slug)
	}
	ed.inserted = append(ed.inserted, item.e.ID)
	at := len(doc.Src)
	var prev *Entry
	if n := len(doc.Entries); n > 0 {
		prev = doc.Entries[n-1]
		at = prev.End
	}
	ed.grow[doc.Path] += ed.addItem(doc, at, prev, item)
	return doc.Path
}

// fileBuf is the content of a topic file the edit creates. It grows by
// doubling, like any buffer, but never past the file's size limit unless
// an item needs it: a full 8 MiB part holds about 8 MiB, not the 16 MiB a
// doubling buffer would, which matters for a large import. With a spill
// (SpillTo), every spillChunk bytes go to the spill file and the buffer
// starts over: data is the part not spilled yet.
//
// The ids of the entries inserted into it are kept as a hash of their
// sequence, not a list: the final check (verify) parses the file and
// hashes the ids it finds, which must be those, in that order.
type fileBuf struct {
	data   []byte
	size   int        // bytes in all, spilled or not
	chunks [][2]int64 // spilled parts: offset and length in the spill file
	spill  *spill
	ids    hash.Hash // of the inserted entries' ids (idSeqHash)
	idBuf  []byte    // ids not hashed yet, as addIDToSeq writes them
}

// inserted records that the entry id went into the file. The ids reach
// the hash in blocks (what the hash reads is the same sequence of bytes):
// a write per id costs more than the hashing.
func (f *fileBuf) inserted(id string) {
	if len(f.idBuf)+len(id)+1 > cap(f.idBuf) {
		f.flushIDs()
		if f.idBuf == nil {
			f.idBuf = make([]byte, 0, 4096)
		}
	}
	f.idBuf = append(append(f.idBuf, id...), 0)
}

// flushIDs hashes the ids inserted reports but has not hashed yet.
func (f *fileBuf) flushIDs() {
	if f.ids == nil {
		f.ids = sha256.New()
	}
	_, _ = f.ids.Write(f.idBuf)
	f.idBuf = f.idBuf[:0]
}

// addIDToSeq adds id to a hash of a sequence of ids.
func addIDToSeq(h hash.Hash, id string) {
	_, _ = io.WriteString(h, id)
	_, _ = h.Write([]byte{0})
}

// idSeqSum returns the hash of the sequence of ids (h may be nil: none).
func idSeqSum(h hash.Hash) []byte {
	if h == nil {
		h = sha256.New()
	}
	return h.Sum(nil)
}

// spillChunk is how much of a created topic file an Editor with a spill
// holds before writing it out.
const spillChunk = 64 << 10

// spill is the temp file an Editor writes its created topic files to.
type spill struct {
	f   *os.File
	end int64
	err error // the first write error, reported by Changed
}

func (f *fileBuf) add(text string, limit int) {
	if need := len(f.data) + len(text); need > cap(f.data) {
		c := min(max(2*cap(f.data), 4096), limit)
		if f.spill != nil {
			c = min(c, spillChunk)
		}
		grown := make([]byte, len(f.data), max(c, need))
		copy(grown, f.data)
		f.data = grown
	}
	f.data = append(f.data, text...)
	f.size += len(text)
	if sp := f.spill; sp != nil && len(f.data) >= spillChunk && sp.err == nil {
		if _, sp.err = sp.f.WriteAt(f.data, sp.end); sp.err == nil {
			f.chunks = append(f.chunks, [2]int64{sp.end, int64(len(f.data))})
			sp.end += int64(len(f.data))
			f.data = f.data[:0]
		}
	}
}

// bytes returns the file's content, read back from the spill if it went
// there.
func (f *fileBuf) bytes() ([]byte, error) {
	if len(f.chunks) == 0 {
		return f.data, nil
	}
	out := make([]byte, f.size)
	n := 0
	for _, c := range f.chunks {
		if _, err := f.spill.f.ReadAt(out[n:n+int(c[1])], c[0]); err != nil {
			return nil, fmt.Errorf("edit spill: %w", err)
		}
		n += int(c[1])
	}
	copy(out[n:], f.data)
	return out, nil
}

// SpillTo makes the topic files the edit creates go to f, a temp file
// the caller owns (and has unlinked), in chunks as they fill: a large
// import holds a chunk of each, not the files (see ChangedLoad).
func (ed *Editor) SpillTo(f *os.File) { ed.spill = &spill{f: f} }

func defaultTitle(slug string) string {
	return strings.ToUpper(slug[:1]) + strings.ReplaceAll(slug[1:], "-", " ")
}

// topicFile returns the slug of the file of topic slug's chain (the topic,
// then its parts <slug>-2, -3, …) that takes an insert of n bytes: the
// last part, or a new part when the last one would grow past maxBytes.
// A part of a split topic given as slug stands for its whole chain.
func (ed *Editor) topicFile(slug string, n int) string {
	base := ed.splitBase(slug)
	cur, ok := ed.last[base]
	if !ok {
		cur = base
		for k := 2; ; k++ {
			s := partSlug(base, k)
			if ed.partBase[s] == base {
				cur = s
				continue
			}
			d := ed.m.Topics[s]
			if d == nil && ed.created[s] == nil {
				break
			}
			if d != nil && isPart(d, k) {
				cur = s
			}
		}
	}
	if ed.full(cur, n) {
		k := 2
		if cur != base {
			k = partNum(cur) + 1
		}
		for ed.m.Topics[partSlug(base, k)] != nil || ed.created[partSlug(base, k)] != nil {
			k++
		}
		next := partSlug(base, k)
		title := ed.titles[base]
		if d := ed.m.Topics[base]; d != nil && topicTitle(d) != "" {
			title = topicTitle(d)
		}
		if title == "" {
			title = defaultTitle(base)
		}
		ed.titles[next] = partTitle(title, k)
		ed.partBase[next] = base
		cur = next
	}
	ed.last[base] = cur
	return cur
}

// splitBase returns the topic a part belongs to (slug itself if it is no
// part).
func (ed *Editor) splitBase(slug string) string {
	if b := ed.partBase[slug]; b != "" {
		return b
	}
	if d := ed.m.Topics[slug]; d != nil {
		if m := partSuffix.FindStringSubmatch(slug); m != nil && isPart(d, partNum(slug)) {
			return m[1]
		}
	}
	return slug
}

// partNum is the number at the end of a part's slug.
func partNum(slug string) int {
	m := partSuffix.FindStringSubmatch(slug)
	if m == nil {
		return 1
	}
	k, _ := strconv.Atoi(m[2])
	return k
}

// full reports whether n more bytes would take topic file slug past
// maxBytes. A file this edit created and has not written an item into
// yet always takes one item, so an item larger than the limit still lands.
func (ed *Editor) full(slug string, n int) bool {
	size := 0
	if d := ed.m.Topics[slug]; d != nil {
		size = len(d.Src) + ed.grow[d.Path]
	} else if b := ed.created[slug]; b != nil {
		if ed.items[slug] == 0 {
			return false
		}
		size = b.size
	} else {
		return false
	}
	return size+n > ed.maxBytes
}

// addItem inserts item at offset at, continuing the list of prev, and
// returns the number of bytes inserted.
func (ed *Editor) addItem(doc *Doc, at int, prev *Entry, item pendingItem) int {
	key := fmt.Sprintf("%s\x00%d", doc.Path, at)
	ed.atCount[key]++
	text := item.text(prev, ed.atCount[key])
	if usesCRLF(doc.Src) {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	text = lineStartText(doc.Src, at) + text
	ed.add(doc.Path, at, at, text)
	if ed.atCount[key] == 1 && continuesItem(doc.Src[at:]) {
		// A paragraph follows the insertion point (a person's text under
		// the heading): a blank line keeps it from becoming part of the
		// new entry (a lazy continuation line), after every item inserted
		// here.
		nl := "\n"
		if usesCRLF(doc.Src) {
			nl = "\r\n"
		}
		ed.splices[doc.Path] = append(ed.splices[doc.Path], splice{at, at, nl, math.MaxInt})
	}
	return len(text)
}

// continuesItem reports whether rest starts with a line that Markdown
// would read as a continuation of a list item ending just before it: a
// non-blank line that is neither a heading, a list item nor a fence.
func continuesItem(rest []byte) bool {
	line := rest
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		line = rest[:i]
	}
	l := strings.TrimRight(string(line), "\r")
	t := strings.TrimLeft(l, " ")
	switch {
	case strings.TrimSpace(l) == "", strings.HasPrefix(t, "#"), strings.HasPrefix(t, "```"), strings.HasPrefix(t, "~~~"):
		return false
	case strings.HasPrefix(t, "- "), strings.HasPrefix(t, "* "), strings.HasPrefix(t, "+ "), t == "-", t == "*", t == "+":
		return false
	}
	i := 0
	for i < len(t) && i < 9 && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	return !(i > 0 && i < len(t) && (t[i] == '.' || t[i] == ')'))
}

// lineStartText returns "\n" when an insert at off would not start a line.
func lineStartText(src []byte, off int) string {
	if off > 0 && off <= len(src) && src[off-1] != '\n' {
		if usesCRLF(src) {
			return "\r\n"
		}
		return "\n"
	}
	return ""
}

func (ed *Editor) indexTopic(slug, title string) {
	path := TopicPath(slug)
	for _, l := range ed.m.Main.Index {
		if l.Path == path {
			return
		}
	}
	ed.insertMain(TitleIndex, "", pendingItem{raw: fmt.Sprintf("- %s → %s\n", title, path)})
}

// insertMain inserts text (one or more lines) at the end of the entries of
// section h1/h2 of MEMORY.md, creating the headings when missing: each
// once per edit, in the canonical order of the layout.
func (ed *Editor) insertMain(h1, h2 string, item pendingItem) {
	doc := ed.m.Main
	start, end, found := doc.sectionRange(h1, h2)
	if found {
		at, prev := doc.lastItemEnd(start, end, h1 == TitleIndex, sectionCategory(h1, h2))
		ed.addItem(doc, at, prev, item)
		return
	}
	nl := "\n"
	if usesCRLF(doc.Src) {
		nl = "\r\n"
	}
	text := strings.ReplaceAll(item.text(nil, 0), "\n", nl)
	key := h1 + "\x00" + h2
	if b := ed.newHeads[key]; b != nil {
		b.WriteString(text)
		return
	}
	if _, _, ok := doc.sectionRange(h1, ""); h2 != "" && !ok {
		// The H1 is missing too: one new H1 holds every new subsection.
		parent := h1 + "\x00"
		if ed.newHeads[parent] == nil {
			ed.newSection(doc, h1, "", "")
		}
		b := &strings.Builder{}
		b.WriteString("## " + h2 + nl + text)
		ed.newHeads[key] = b
		ed.children[parent] = append(ed.children[parent], h2)
		return
	}
	ed.newSection(doc, h1, h2, text)
}

// newSection creates the missing section h1/h2 holding text, at a place
// consistent with the layout.
func (ed *Editor) newSection(doc *Doc, h1, h2, text string) {
	key := h1 + "\x00" + h2
	b := &strings.Builder{}
	ed.newHeads[key] = b
	at, heading := doc.newSectionPoint(h1, h2)
	nl := "\n"
	if usesCRLF(doc.Src) {
		nl = "\r\n"
	}
	prefix := lineStartText(doc.Src, at)
	if at > 0 && !endsWithBlankLine(doc.Src[:at]) {
		prefix += nl
	}
	b.WriteString(prefix + strings.ReplaceAll(heading, "\n", nl))
	b.WriteString(text)
	if rest := doc.Src[at:]; len(rest) > 0 && !bytes.HasPrefix(rest, []byte("\n")) && !bytes.HasPrefix(rest, []byte("\r\n")) {
		ed.blankAfter[key] = nl
	}
	ed.seq++
	ed.splices[doc.Path] = append(ed.splices[doc.Path], splice{start: at, end: at, seq: ed.seq, text: "\x00" + key})
}

// writeNewSection writes a section created by this edit: its heading and
// items, then its new subsections in canonical order.
func (ed *Editor) writeNewSection(b *bytes.Buffer, key string) {
	b.WriteString(ed.newHeads[key].String())
	kids := ed.children[key]
	sort.SliceStable(kids, func(i, j int) bool { return subsectionRank(kids[i]) < subsectionRank(kids[j]) })
	nl := "\n"
	if usesCRLF(ed.m.Main.Src) {
		nl = "\r\n"
	}
	for i, h2 := range kids {
		if i > 0 {
			b.WriteString(nl) // a blank line between subsections
		}
		b.WriteString(ed.newHeads[key+h2].String())
	}
	b.WriteString(ed.blankAfter[key])
}

// subsectionRank orders the subsections of the core profile: the core
// categories in their order, then Pending confirmation.
func subsectionRank(h2 string) int {
	n := 0
	for _, c := range Categories {
		if c.Core {
			if strings.EqualFold(c.Heading, h2) {
				return n
			}
			n++
		}
	}
	return n
}

// sectionCategory is the category whose entries section h1/h2 holds ("" for
// sections of any category).
func sectionCategory(h1, h2 string) string {
	if h1 != TitleCore {
		return ""
	}
	for _, c := range Categories {
		if c.Core && strings.EqualFold(c.Heading, h2) {
			return c.Name
		}
	}
	return ""
}

func endsWithBlankLine(src []byte) bool {
	return bytes.HasSuffix(src, []byte("\n\n")) || bytes.HasSuffix(src, []byte("\r\n\r\n"))
}

// sectionRange finds the byte range of section h1 (and its h2 subsection
// when h2 != ""): from the end of its heading line to the next heading of
// the same or a higher level.
func (d *Doc) sectionRange(h1, h2 string) (start, end int, ok bool) {
	in1 := false
	for i, h := range d.Headings {
		if h.Level == 1 {
			in1 = strings.EqualFold(h.Title, h1)
			if in1 && h2 == "" {
				return h.End, d.nextHeading(i, 1), true
			}
			continue
		}
		if h2 != "" && h.Level == 2 && strings.EqualFold(h.Title, h2) && (in1 || h2 == TitlePending) {
			return h.End, d.nextHeading(i, 2), true
		}
	}
	return 0, 0, false
}

func (d *Doc) nextHeading(i, level int) int {
	for _, h := range d.Headings[i+1:] {
		if h.Level <= level {
			return h.Start
		}
	}
	return len(d.Src)
}

// lastItemEnd is the insertion point of a section: after its last entry (or
// index line), else right after its heading. In a section of category cat
// ("" for any) the last entry of that category counts, so an entry of
// another category left there (a heading deleted by hand) does not carry
// new entries away from their heading. It also returns that last entry,
// whose list marker new items continue.
func (d *Doc) lastItemEnd(start, end int, index bool, cat string) (int, *Entry) {
	at := start
	if index {
		for _, l := range d.Index {
			off := d.lineOffset(l.Line)
			if off >= start && off < end {
				at = lineEndAt(d.Src, off)
			}
		}
		return at, nil
	}
	var last *Entry
	for _, e := range d.Entries {
		if e.Start >= start && e.Start < end && e.End > at && (cat == "" || entryOf(e, cat)) {
			at, last = e.End, e
		}
	}
	for _, e := range d.Entries {
		if e.Start >= at && e.Start < end && last != nil {
			// Entries of another category follow: stay next to the last
			// one of ours, before the blank line that separates them.
			return max(trimBlankTail(d.Src, at), last.HeadEnd), last
		}
	}
	return at, last
}

// entryOf reports whether e belongs with entries of category cat: its id
// says so, or it has no id memctl knows.
func entryOf(e *Entry, cat string) bool {
	c, ok := CategoryOfID(e.ID)
	return !ok || c.Name == cat
}

// newSectionPoint decides where a missing section goes and returns the
// heading text to write there.
func (d *Doc) newSectionPoint(h1, h2 string) (int, string) {
	order := []string{TitleCore, TitleIndex, TitleArchive}
	if h2 != "" {
		heading := "## " + h2 + "\n"
		if s, e, ok := d.sectionRange(h1, ""); ok {
			// Before the first later core subsection, else at the end of the H1.
			later := false
			for _, c := range Categories {
				if later && c.Core {
					if hs, _, ok := d.sectionRange(h1, c.Heading); ok {
						return d.headingStartBefore(hs), heading
					}
				}
				if c.Heading == h2 {
					later = true
				}
			}
			if h2 != TitlePending {
				if hs, _, ok := d.sectionRange(h1, TitlePending); ok {
					return d.headingStartBefore(hs), heading
				}
			}
			_ = s
			return trimBlankTail(d.Src, e), heading
		}
		at, h := d.newSectionPoint(h1, "")
		return at, h + heading
	}
	heading := "# " + h1 + "\n"
	idx := 0
	for i, t := range order {
		if t == h1 {
			idx = i
		}
	}
	for _, t := range order[idx+1:] {
		if s, _, ok := d.sectionRange(t, ""); ok {
			return d.headingStartBefore(s), heading
		}
	}
	return len(d.Src), heading
}

// headingStartBefore maps a section start (end of heading line) back to the
// start of that heading line.
func (d *Doc) headingStartBefore(sectionStart int) int {
	for _, h := range d.Headings {
		if h.End == sectionStart {
			return h.Start
		}
	}
	return sectionStart
}

func trimBlankTail(src []byte, end int) int {
	for end > 0 {
		ls := lineStartAt(src, end-1)
		if len(bytes.TrimSpace(src[ls:end])) != 0 {
			break
		}
		end = ls
	}
	return end
}

// Changed returns the new content of every file the edit changes or creates,
// by memory-relative path. It refuses (FileTooLargeError) an edit that
// would leave a file memctl cannot read back, or grow MEMORY.md past
// files.max_bytes (see CheckWriteSize).
func (ed *Editor) Changed() (map[string][]byte, error) {
	out, created, err := ed.ChangedLoad()
	if err != nil {
		return nil, err
	}
	for p, c := range created {
		if out[p], err = c.Load(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Created is a file an edit creates, read back when loaded.
type Created struct {
	Size int
	Load func() ([]byte, error)
	ids  []byte // the hash of the sequence of its entries' ids
}

// ChangedLoad is Changed with the files the edit creates apart, as
// loaders: with a spill (SpillTo), each is read back from it when loaded,
// so a large import holds a file per core at a time. The checks are
// Changed's, the final one (verify) loading each created file in turn on
// one of the cores.
func (ed *Editor) ChangedLoad() (map[string][]byte, map[string]Created, error) {
	if ed.spill != nil && ed.spill.err != nil {
		return nil, nil, fmt.Errorf("edit spill: %w", ed.spill.err)
	}
	out := map[string][]byte{}
	for path, sp := range ed.splices {
		doc := ed.m.Doc(path)
		if doc == nil {
			return nil, nil, fmt.Errorf("edit of unknown file %s", path)
		}
		sort.SliceStable(sp, func(i, j int) bool {
			if sp[i].start != sp[j].start {
				return sp[i].start < sp[j].start
			}
			return sp[i].seq < sp[j].seq
		})
		var b bytes.Buffer
		b.Grow(len(doc.Src) + 1024)
		pos := 0
		for _, s := range sp {
			if s.start < pos {
				return nil, nil, fmt.Errorf("%s: overlapping edits at line %d", path, doc.LineOf(s.start))
			}
			b.Write(doc.Src[pos:s.start])
			if strings.HasPrefix(s.text, "\x00") {
				ed.writeNewSection(&b, s.text[1:])
			} else {
				b.WriteString(s.text)
			}
			pos = s.end
		}
		b.Write(doc.Src[pos:])
		if err := CheckWriteSize(path, doc.Src, b.Bytes(), ed.maxBytes); err != nil {
			return nil, nil, err
		}
		out[path] = b.Bytes()
	}
	created := map[string]Created{}
	for slug, b := range ed.created {
		// A created file is a topic file: only the read limit applies.
		if err := checkReadableSize(TopicPath(slug), b.size); err != nil {
			return nil, nil, err
		}
		b.flushIDs()
		created[TopicPath(slug)] = Created{Size: b.size, Load: b.bytes, ids: idSeqSum(b.ids)}
	}
	return out, created, ed.verify(out, created)
}

// verifyCreated checks that each created file holds the entries inserted
// into it, in order, and nothing else: by the hash of their ids'
// sequence, so that a large import holds no list of them. The files are
// independent: they are read back and parsed on every core, a file per
// core at a time. The error is that of the first file, by path, that
// fails.
func verifyCreated(created map[string]Created) error {
	paths := slices.Sorted(maps.Keys(created))
	errs := make([]error, len(paths))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(paths)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < len(paths); i = int(next.Add(1)) - 1 {
				errs[i] = verifyCreatedFile(paths[i], created[paths[i]])
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// verifyCreatedFile is verifyCreated of one file.
func verifyCreatedFile(path string, c Created) error {
	data, err := c.Load()
	if err != nil {
		return err
	}
	h := sha256.New()
	for _, e := range ParseDoc(path, data).Entries {
		addIDToSeq(h, e.ID)
	}
	if !bytes.Equal(h.Sum(nil), c.ids) {
		return fmt.Errorf("internal error: edit would leave %s without the entries inserted into it, or with others; nothing written", path)
	}
	return nil
}

// verify re-parses the changed files and checks that the entries are
// exactly those expected: every entry not removed is still there once, and
// every inserted one is there. It is the last guard against an edit that
// would lose or duplicate a memory.
//
// It keeps one count per id (expected copies minus copies found) and
// parses one changed file at a time (a created file per core), so a
// large import holds a parsed file or two, not all of them.
func (ed *Editor) verify(out map[string][]byte, created map[string]Created) error {
	n := len(ed.inserted)
	for _, d := range ed.m.Docs() {
		n += len(d.Entries)
	}
	diff := make(map[string]int, n)
	for _, d := range ed.m.Docs() {
		_, changed := out[d.Path]
		if _, ok := created[d.Path]; ok {
			changed = true
		}
		for _, e := range d.Entries {
			if !ed.removed[e] {
				diff[e.ID]++
			}
			if !changed {
				diff[e.ID]--
			}
		}
	}
	for _, id := range ed.inserted {
		diff[id]++
	}
	for path, data := range out {
		for _, e := range ParseDoc(path, data).Entries {
			diff[e.ID]--
		}
	}
	if err := verifyCreated(created); err != nil {
		return err
	}
	for id, n := range diff {
		switch {
		case n > 0:
			return fmt.Errorf("internal error: edit would leave %d copies too few of entry %q; nothing written", n, id)
		case n < 0:
			return fmt.Errorf("internal error: edit would leave %d copies too many of entry %q; nothing written", -n, id)
		}
	}
	return nil
}
