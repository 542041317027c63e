package mdmem

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
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
	created  map[string]*strings.Builder
	titles   map[string]string // topic slug → title for new topic files
	removed  map[*Entry]bool
	inserted []string
	seq      int
	// pending headings created in this edit, so two inserts share one
	newHeads   map[string]*strings.Builder
	children   map[string][]string // new H1 key → its new H2 titles (one heading, not one per subsection)
	blankAfter map[string]string   // newHeads key → blank line to add after it
	atCount    map[string]int      // items inserted per offset, to number lists
}

// Edit starts a batch of edits on m.
func (m *Memory) Edit() *Editor {
	return &Editor{m: m, splices: map[string][]splice{}, created: map[string]*strings.Builder{},
		titles: map[string]string{}, removed: map[*Entry]bool{}, newHeads: map[string]*strings.Builder{},
		blankAfter: map[string]string{}, atCount: map[string]int{}, children: map[string][]string{}}
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
	if err := ed.insert(e, t, nestedOf(ed.m.Doc(old.File), old)); err != nil {
		return err
	}
	ed.Remove(old)
	return nil
}

// Insert adds a new entry at t.
func (ed *Editor) Insert(e *Entry, t Target) error { return ed.insert(e, t, "") }

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

func (ed *Editor) insert(e *Entry, t Target, nested string) error {
	item := pendingItem{e: e, nested: nested}
	switch t.Place {
	case PlaceTopic:
		if err := ValidSlug(t.Topic); err != nil {
			return err
		}
		ed.inserted = append(ed.inserted, e.ID)
		return ed.insertTopic(t.Topic, item)
	case PlaceCore:
		c, ok := CategoryByName(e.Category)
		if !ok || !c.Core {
			return fmt.Errorf("entry %s: category %q has no core section", e.ID, e.Category)
		}
		ed.insertMain(TitleCore, c.Heading, item)
	case PlacePending:
		ed.insertMain(TitleCore, TitlePending, item)
	case PlaceArchive:
		ed.insertMain(TitleArchive, "", item)
	default:
		return fmt.Errorf("cannot insert into place %q", t.Place)
	}
	ed.inserted = append(ed.inserted, e.ID)
	return nil
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

func (ed *Editor) insertTopic(slug string, item pendingItem) error {
	doc := ed.m.Topics[slug]
	if doc == nil {
		b := ed.created[slug]
		if b == nil {
			b = &strings.Builder{}
			title := ed.titles[slug]
			if title == "" {
				title = strings.ToUpper(slug[:1]) + strings.ReplaceAll(slug[1:], "-", " ")
			}
			fmt.Fprintf(b, "# %s\n\n", title)
			ed.created[slug] = b
			ed.indexTopic(slug, title)
		}
		b.WriteString(item.text(nil, 0))
		return nil
	}
	at := len(doc.Src)
	var prev *Entry
	if n := len(doc.Entries); n > 0 {
		prev = doc.Entries[n-1]
		at = prev.End
	}
	ed.addItem(doc, at, prev, item)
	return nil
}

// addItem inserts item at offset at, continuing the list of prev.
func (ed *Editor) addItem(doc *Doc, at int, prev *Entry, item pendingItem) {
	key := fmt.Sprintf("%s\x00%d", doc.Path, at)
	ed.atCount[key]++
	text := item.text(prev, ed.atCount[key])
	if usesCRLF(doc.Src) {
		text = strings.ReplaceAll(text, "\n", "\r\n")
	}
	ed.add(doc.Path, at, at, lineStartText(doc.Src, at)+text)
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
// by memory-relative path.
func (ed *Editor) Changed() (map[string][]byte, error) {
	out := map[string][]byte{}
	for path, sp := range ed.splices {
		doc := ed.m.Doc(path)
		if doc == nil {
			return nil, fmt.Errorf("edit of unknown file %s", path)
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
				return nil, fmt.Errorf("%s: overlapping edits at line %d", path, doc.LineOf(s.start))
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
		out[path] = b.Bytes()
	}
	for slug, b := range ed.created {
		out[TopicPath(slug)] = []byte(b.String())
	}
	return out, ed.verify(out)
}

// verify re-parses the changed files and checks that the entries are
// exactly those expected: every entry not removed is still there once, and
// every inserted one is there. It is the last guard against an edit that
// would lose or duplicate a memory.
func (ed *Editor) verify(out map[string][]byte) error {
	want := map[string]int{}
	for _, e := range ed.m.Entries() {
		if !ed.removed[e] {
			want[e.ID]++
		}
	}
	for _, id := range ed.inserted {
		want[id]++
	}
	got := map[string]int{}
	for _, d := range ed.m.Docs() {
		if _, changed := out[d.Path]; !changed {
			for _, e := range d.Entries {
				got[e.ID]++
			}
		}
	}
	for path, data := range out {
		for _, e := range ParseDoc(path, data).Entries {
			got[e.ID]++
		}
	}
	for id, n := range want {
		if got[id] != n {
			return fmt.Errorf("internal error: edit would leave %d copies of entry %q instead of %d; nothing written", got[id], id, n)
		}
	}
	for id, n := range got {
		if want[id] != n {
			return fmt.Errorf("internal error: edit would leave %d copies of entry %q instead of %d; nothing written", n, id, want[id])
		}
	}
	return nil
}
