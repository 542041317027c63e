package mdmem

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/memctl/memctl/mdmem/osfile"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"gopkg.in/yaml.v3"
)

// Section titles of MEMORY.md, matched case-insensitively.
const (
	TitleCore    = "Core profile"
	TitlePending = "Pending confirmation"
	TitleIndex   = "Topic index"
	TitleArchive = "Archive"
)

// Heading is one Markdown heading with its byte range.
type Heading struct {
	Level int
	Title string
	Line  int
	Start int // offset of the heading line
	End   int // offset just past the heading line
}

// FrontMatter is the optional YAML header of a topic file.
type FrontMatter struct {
	Description string   `yaml:"description,omitempty"`
	Keywords    []string `yaml:"keywords,omitempty"`
}

// IndexLine is one "- Title → topics/slug.md" line of the topic index.
type IndexLine struct {
	Title string
	Path  string
	Line  int
}

// Problem is something memctl lint reports: file, line and message.
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Message string `json:"message"`
}

// String formats the problem as file:line: message.
func (p Problem) String() string { return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Message) }

// Doc is one parsed memory file. Src is kept whole: edits splice it.
type Doc struct {
	Path      string // memory-relative path
	Src       []byte
	Topic     string // slug for topic files, "" for MEMORY.md
	Front     *FrontMatter
	BodyStart int // offset where the Markdown body starts (after front matter)
	Headings  []Heading
	Entries   []*Entry
	Index     []IndexLine
	Problems  []Problem
	// Conflicts are the git conflict markers of the file. The conflicted
	// regions are blank in Src (see findConflicts): an unfinished merge is
	// never read as memory, and a memory holding one is never written.
	Conflicts []ConflictMarker
	lineStart []int  // byte offset of each line start, for offset → line
	str       string // Src as a string: entry fields are substrings of it
	slab      []Entry
	strs      strSlab
}

// newEntry allocates entries in blocks: one allocation per block instead of
// one per entry.
func (d *Doc) newEntry() *Entry {
	if len(d.slab) == cap(d.slab) {
		n := 2 * cap(d.slab)
		if n == 0 {
			n = min(16+bytes.Count(d.Src, []byte("\n")), 4096)
		}
		d.slab = make([]Entry, 0, n)
		osfile.Prefault(osfile.Bytes(d.slab[:n]))
	}
	d.slab = d.slab[:len(d.slab)+1]
	return &d.slab[len(d.slab)-1]
}

// MainFile is the memory-relative path of the main memory file.
const MainFile = "MEMORY.md"

// TopicDir is the memory-relative directory of topic files.
const TopicDir = "topics"

var mdParser = parser.NewParser(
	parser.WithBlockParsers(parser.DefaultBlockParsers()...),
	parser.WithInlineParsers(),
	parser.WithParagraphTransformers(),
)

// ParseDoc parses a memory file. path decides the kind: MainFile or
// topics/<slug>.md. It never fails: what it cannot read becomes a Problem,
// and every byte stays in Src, except the lines of a git conflict, which
// are blanked (Doc.Conflicts).
func ParseDoc(path string, src []byte) *Doc {
	marks, regions := findConflicts(src)
	if len(regions) > 0 {
		src = blankRegions(src, regions)
	}
	d := &Doc{Path: path, Src: src, str: osfile.String(src)}
	if path != MainFile {
		d.Topic = TopicSlug(path)
	}
	for _, m := range marks {
		d.Conflicts = append(d.Conflicts, ConflictMarker{File: path, Line: m.line, Marker: m.marker})
		d.Problems = append(d.Problems, Problem{File: path, Line: m.line, Message: fmt.Sprintf(
			"git conflict marker %s: an unfinished merge; memctl reads none of its conflicted lines and writes nothing until it is finished: %s", m.marker, ConflictHint)})
	}
	if !utf8.Valid(src) {
		d.problem(0, "file is not valid UTF-8; memctl will not edit it")
	}
	body := src
	if d.Topic != "" {
		d.parseFrontMatter()
		body = src[d.BodyStart:]
	}
	if !d.parseSimple(body, d.BodyStart) {
		d.Headings, d.Entries, d.Index = nil, nil, nil
		flat, deep := flattenDeepNesting(body)
		for _, l := range deep {
			d.problem(d.lineOffset(d.LineOf(d.BodyStart)+l), "blocks nested deeper than %d levels; memctl reads the rest of this line as text", maxNesting)
		}
		root := mdParser.Parse(text.NewReader(flat))
		d.walk(root, flat, d.BodyStart)
	}
	return d
}

func (d *Doc) indexLines() {
	d.lineStart = make([]int, 1, 1+bytes.Count(d.Src, []byte("\n")))
	for i, c := range d.Src {
		if c == '\n' {
			d.lineStart = append(d.lineStart, i+1)
		}
	}
}

// lineOffset returns the byte offset where 1-based line n starts.
func (d *Doc) lineOffset(n int) int {
	if d.lineStart == nil {
		d.indexLines()
	}
	return d.lineStart[n-1]
}

// LineOf returns the 1-based line number of a byte offset.
func (d *Doc) LineOf(off int) int {
	if d.lineStart == nil {
		d.indexLines()
	}
	lo, hi := 0, len(d.lineStart)-1
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if d.lineStart[mid] <= off {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo + 1
}

func (d *Doc) problem(off int, format string, args ...any) {
	d.Problems = append(d.Problems, Problem{File: d.Path, Line: d.LineOf(off), Message: fmt.Sprintf(format, args...)})
}

func (d *Doc) parseFrontMatter() {
	src := d.Src
	if !bytes.HasPrefix(src, []byte("---\n")) && !bytes.HasPrefix(src, []byte("---\r\n")) {
		return
	}
	first := bytes.IndexByte(src, '\n') + 1
	for off := first; off < len(src); {
		nl := bytes.IndexByte(src[off:], '\n')
		end := len(src)
		if nl >= 0 {
			end = off + nl + 1
		}
		if line := bytes.TrimRight(src[off:end], "\r\n"); string(line) == "---" || string(line) == "..." {
			var fm FrontMatter
			if err := yaml.Unmarshal(src[first:off], &fm); err != nil {
				d.problem(0, "front matter is not valid YAML: %v", oneLineErr(err))
			}
			d.Front = &fm
			d.BodyStart = end
			return
		}
		off = end
	}
	d.problem(0, "front matter has no closing ---")
}

func oneLineErr(err error) string { return OneLine(err.Error()) }

// lineStartAt returns the start of the line containing off.
func lineStartAt(src []byte, off int) int {
	if off > len(src) {
		off = len(src)
	}
	i := bytes.LastIndexByte(src[:off], '\n')
	return i + 1
}

// lineEndAt returns the offset just past the newline ending the line that
// contains off (or len(src)).
func lineEndAt(src []byte, off int) int {
	if off >= len(src) {
		return len(src)
	}
	i := bytes.IndexByte(src[off:], '\n')
	if i < 0 {
		return len(src)
	}
	return off + i + 1
}

// firstSegment returns the first source segment under n, depth first.
func firstSegment(n ast.Node) (text.Segment, bool) {
	if n.Type() == ast.TypeBlock && n.Lines().Len() > 0 {
		return n.Lines().At(0), true
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if s, ok := firstSegment(c); ok {
			return s, true
		}
	}
	return text.Segment{}, false
}

// lastSegmentStop returns the largest segment stop under n.
func lastSegmentStop(n ast.Node) int {
	stop := -1
	if n.Type() == ast.TypeBlock {
		if l := n.Lines(); l.Len() > 0 {
			stop = l.At(l.Len() - 1).Stop
		}
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		if s := lastSegmentStop(c); s > stop {
			stop = s
		}
	}
	return stop
}

func (d *Doc) walk(root ast.Node, body []byte, base int) {
	var h1, h2 string
	for n := root.FirstChild(); n != nil; n = n.NextSibling() {
		switch n.Kind() {
		case ast.KindHeading:
			h := n.(*ast.Heading)
			seg, ok := firstSegment(h)
			if !ok {
				continue
			}
			start := lineStartAt(body, seg.Start)
			end := lineEndAt(body, lastSegmentStop(h))
			if h.Lines().Len() > 0 && end < len(body) && isSetextUnderline(body, end) {
				end = lineEndAt(body, end)
			}
			title := headingTitle(body, h)
			d.Headings = append(d.Headings, Heading{Level: h.Level, Title: title, Line: d.LineOf(base + start), Start: base + start, End: base + end})
			if h.Level == 1 {
				h1, h2 = title, ""
			} else if h.Level == 2 {
				h2 = title
			}
		case ast.KindList:
			d.readList(n.(*ast.List), body, base, h1, h2)
		}
	}
}

func isSetextUnderline(src []byte, off int) bool {
	line := bytes.TrimSpace(src[off:lineEndAt(src, off)])
	if len(line) == 0 {
		return false
	}
	return len(bytes.Trim(line, "=")) == 0 || len(bytes.Trim(line, "-")) == 0
}

func headingTitle(src []byte, h *ast.Heading) string {
	var b strings.Builder
	for i := 0; i < h.Lines().Len(); i++ {
		s := h.Lines().At(i)
		b.Write(s.Value(src))
	}
	return strings.TrimSpace(strings.TrimRight(strings.TrimSpace(b.String()), "#"))
}

// placeOf decides where entries under the given headings live.
func (d *Doc) placeOf(h1, h2 string) (Place, string) {
	if d.Topic != "" {
		return PlaceTopic, ""
	}
	switch {
	case strings.EqualFold(h2, TitlePending) || strings.EqualFold(h1, TitlePending):
		return PlacePending, ""
	case strings.EqualFold(h1, TitleArchive):
		return PlaceArchive, ""
	case strings.EqualFold(h1, TitleCore):
		for _, c := range Categories {
			if c.Core && strings.EqualFold(h2, c.Heading) {
				return PlaceCore, c.Name
			}
		}
	}
	return PlaceOther, ""
}

func (d *Doc) readList(list *ast.List, body []byte, base int, h1, h2 string) {
	place, cat := d.placeOf(h1, h2)
	isIndex := d.Topic == "" && strings.EqualFold(h1, TitleIndex)
	section := h2
	if section == "" {
		section = h1
	}
	var items []ast.Node
	for it := list.FirstChild(); it != nil; it = it.NextSibling() {
		items = append(items, it)
	}
	for i, it := range items {
		seg, ok := firstSegment(it)
		if !ok {
			continue // an empty item: kept verbatim, nothing to read
		}
		start := lineStartAt(body, seg.Start)
		var end int
		if i+1 < len(items) {
			if next, ok := firstSegment(items[i+1]); ok {
				end = lineStartAt(body, next.Start)
			}
		}
		if end <= start {
			end = itemEnd(body, lastSegmentStop(it), contentIndent(body[start:seg.Start]))
		}
		if isIndex {
			d.readIndexLine(body, base, start, seg)
			continue
		}
		d.readEntry(it, seg, body, base, start, end, place, cat, section)
	}
}

// contentIndent is the column where an item's content starts, given its
// marker ("- ", "*   ", "10. "): continuation lines must be indented at
// least this far.
func contentIndent(marker []byte) int {
	col, i := 0, 0
	for ; i < len(marker) && (marker[i] == ' ' || marker[i] == '\t'); i++ {
		col = nextCol(col, marker[i])
	}
	for ; i < len(marker) && marker[i] != ' ' && marker[i] != '\t'; i++ {
		col++
	}
	bullet := col
	for ; i < len(marker); i++ {
		col = nextCol(col, marker[i])
	}
	if col-bullet > 4 || col == bullet {
		return bullet + 1 // content starting with indented code: one space counts
	}
	return col
}

func nextCol(col int, c byte) int {
	if c == '\t' {
		return col + 4 - col%4
	}
	return col + 1
}

// indentOf returns the column of a line's first non-blank character.
func indentOf(line []byte) int {
	col := 0
	for _, c := range line {
		if c != ' ' && c != '\t' {
			break
		}
		col = nextCol(col, c)
	}
	return col
}

// itemEnd finds the end of a list's last item: after its last segment, the
// following lines that are blank or indented to the item's content column
// (continuation, nested code), minus trailing blank lines.
func itemEnd(src []byte, lastStop, indent int) int {
	end := lineEndAt(src, max(lastStop-1, 0))
	if lastStop <= 0 {
		end = lineEndAt(src, 0)
	}
	off := end
	for off < len(src) {
		le := lineEndAt(src, off)
		line := src[off:le]
		if len(bytes.TrimSpace(line)) == 0 {
			off = le
			continue
		}
		if indentOf(line) >= indent {
			off = le
			end = le
			continue
		}
		break
	}
	return end
}

func (d *Doc) readIndexLine(body []byte, base, start int, seg text.Segment) {
	d.readIndexText(strings.TrimSpace(string(seg.Value(body))), base, start)
}

func (d *Doc) readIndexText(line string, base, start int) {
	title, path, ok := strings.Cut(line, "→")
	if !ok {
		title, path, ok = strings.Cut(line, "->")
	}
	if !ok {
		d.problem(base+start, "topic index line without \"→ topics/<name>.md\": %q", line)
		return
	}
	d.Index = append(d.Index, IndexLine{Title: strings.TrimSpace(title), Path: strings.TrimSpace(path), Line: d.LineOf(base + start)})
}

// item is what the entry reader needs of one top-level list item.
type item struct {
	start, end   int    // item byte range (body offsets)
	textStart    int    // offset of the item's text, just after the marker
	headEnd      int    // end of the first paragraph's last line
	text         string // first paragraph, lines trimmed and joined by spaces
	firstLineLen int    // length of the first line within text
	nested       bool   // more blocks follow the first paragraph
	line         int    // 1-based line of start
}

func (d *Doc) readEntry(it ast.Node, seg text.Segment, body []byte, base, start, end int, place Place, cat, section string) {
	first := it.FirstChild()
	if first.Kind() != ast.KindParagraph && first.Kind() != ast.KindTextBlock {
		return // an item that starts with a code block or similar: not an entry
	}
	var b strings.Builder
	in := item{start: start, end: end, textStart: seg.Start, headEnd: end, nested: first.NextSibling() != nil, line: d.LineOf(base + start)}
	for i := 0; i < first.Lines().Len(); i++ {
		s := first.Lines().At(i)
		if i > 0 {
			b.WriteByte(' ')
		}
		b.Write(bytes.TrimSpace(s.Value(body)))
		if i == 0 {
			in.firstLineLen = b.Len()
		}
	}
	if first.Lines().Len() > 0 {
		in.headEnd = lineEndAt(body, first.Lines().At(first.Lines().Len()-1).Stop-1)
	}
	in.text = b.String()
	d.addEntry(in, body, base, place, cat, section)
}

func (d *Doc) addEntry(in item, body []byte, base int, place Place, cat, section string) {
	e := d.newEntry()
	*e = Entry{
		Marker:  d.str[base+in.start : base+in.textStart],
		HeadEnd: base + in.headEnd,
		File:    d.Path, Topic: d.Topic, Place: place, Section: section,
		Start: base + in.start, End: base + in.end, Line: in.line,
		Nested: in.nested,
	}
	e.Raw = d.str[e.Start:e.End]
	for _, p := range parseItemText(in.text, in.firstLineLen, e, &d.strs) {
		d.problem(e.Start, "%s", p)
	}
	e.Category = cat
	if c, ok := CategoryOfID(e.ID); ok && (cat == "" || place != PlaceCore) {
		e.Category = c.Name
	}
	if e.Category == "" && place == PlaceTopic {
		e.Category = "note"
	}
	d.Entries = append(d.Entries, e)
}

// TopicSlug returns the slug of a topic file path ("topics/db-notes.md" →
// "db-notes").
func TopicSlug(path string) string {
	path = strings.TrimPrefix(path, TopicDir+"/")
	return strings.TrimSuffix(path, ".md")
}

// TopicPath returns the memory-relative path of a topic slug.
func TopicPath(slug string) string { return TopicDir + "/" + slug + ".md" }
