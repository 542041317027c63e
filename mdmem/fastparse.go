package mdmem

import (
	"bytes"
	"strings"
)

// parseSimple is the fast path of the parser. Files memctl writes, and most
// files people keep, use only a few block forms: ATX headings, blank lines
// and one-line "- " / "* " / "+ " list items at column 0. For such a body a
// line scan gives exactly what the goldmark walk gives (FuzzFastPath checks
// this), several times faster. On the first line of any other form it
// gives up and returns false, and ParseDoc parses the body with goldmark.
func (d *Doc) parseSimple(body []byte, base int) bool {
	type pending struct {
		in     item
		bullet byte
		place  Place
		cat    string
		sect   string
		index  bool
	}
	var h1, h2 string
	var open pending // the last item of the current list, not yet emitted
	hasOpen := false
	flush := func(end int) {
		if !hasOpen {
			return
		}
		if end >= 0 {
			open.in.end = end
		}
		if open.index {
			d.readIndexText(open.in.text, base, open.in.start)
		} else {
			d.addEntry(open.in, body, base, open.place, open.cat, open.sect)
		}
		hasOpen = false
	}
	lineNo := bytes.Count(d.Src[:base], []byte("\n")) // lines before the body
	for off := 0; off < len(body); {
		lineNo++
		le := lineEndAt(body, off)
		line := body[off:le]
		content := bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if bytes.IndexByte(content, '\r') >= 0 || bytes.IndexByte(content, 0) >= 0 {
			return false // a lone CR is a line ending to CommonMark; NUL is replaced
		}
		switch {
		case len(bytes.TrimLeft(content, " \t")) == 0:
			if len(content) > 0 {
				return false // whitespace-only lines: leave them to goldmark
			}
		case content[0] == '#':
			level := 0
			for level < len(content) && content[level] == '#' {
				level++
			}
			if level > 6 || level < len(content) && content[level] != ' ' {
				return false
			}
			flush(-1)
			title := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(string(content[level:])), "#"))
			if title == "" || bytes.ContainsAny(content[level:], "#\t\\") {
				return false
			}
			d.Headings = append(d.Headings, Heading{Level: level, Title: title, Line: lineNo, Start: base + off, End: base + le})
			if level == 1 {
				h1, h2 = title, ""
			} else if level == 2 {
				h2 = title
			}
		case (content[0] == '-' || content[0] == '*' || content[0] == '+') && len(content) > 2 && content[1] == ' ':
			text := content[2:]
			if !simpleItemText(text) {
				return false
			}
			if hasOpen && open.bullet == content[0] {
				flush(off) // same list: the item runs to the next one
			} else {
				flush(-1)
			}
			place, cat := d.placeOf(h1, h2)
			sect := h2
			if sect == "" {
				sect = h1
			}
			t := strings.TrimSpace(d.str[base+off+2 : base+le])
			hasOpen = true
			open = pending{
				in:     item{start: off, end: le, textStart: off + 2, headEnd: le, text: t, firstLineLen: len(t), line: lineNo},
				bullet: content[0], place: place, cat: cat, sect: sect,
				index: d.Topic == "" && strings.EqualFold(h1, TitleIndex),
			}
		default:
			return false
		}
		off = le
	}
	flush(-1)
	return true
}

// simpleItemText reports whether an item's text is plain paragraph text
// that cannot open another block (heading, quote, code, list, HTML, table,
// thematic break) or continue on the next line.
func simpleItemText(text []byte) bool {
	t := bytes.TrimRight(text, "\r\n")
	if len(t) == 0 || bytes.ContainsAny(t, "\t") {
		return false
	}
	switch t[0] {
	case ' ', '-', '*', '+', '#', '>', '`', '~', '<', '|', '=', '_', '\\':
		return false
	}
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i > 0 && i < len(t) && (t[i] == '.' || t[i] == ')') {
		return false
	}
	// A hard line break or trailing backslash changes nothing for one line,
	// but keep the fast path to the plainest lines.
	return !bytes.HasSuffix(t, []byte("\\"))
}
