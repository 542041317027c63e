package mdmem

import (
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// Place says where an entry lives, which decides how memctl treats it.
type Place string

// The places an entry can live in.
const (
	PlaceCore    Place = "core"    // a category subsection of "# Core profile" (L1)
	PlacePending Place = "pending" // "## Pending confirmation"
	PlaceTopic   Place = "topic"   // a topic file (L2)
	PlaceArchive Place = "archive" // "# Archive" (L3, never injected)
	PlaceOther   Place = "other"   // a section memctl does not know; kept verbatim
)

// Entry is one memory: a Markdown list item "- [id] content (metadata)".
// Everything the JSON schema holds round-trips through the Markdown form.
type Entry struct {
	ID           string    // "dec-014"; empty for a hand-written item without id
	Category     string    // from the section (core) or the id prefix
	Content      string    // the fact, one line, without id and metadata
	Source       string    // "user_explicit", "session_summary", "code review", …
	Created      time.Time // zero if absent
	Updated      time.Time // zero if absent
	Expires      time.Time // zero if absent
	Scope        []string  // "project:order-service"; empty = global
	Confidence   float64   // meaningful only if HasConf
	HasConf      bool      // whether a "conf" field was present
	Refs         []string  // where the memory came from: session ids, dialog turns, files
	Tags         []string  // labels for retrieval
	SupersededBy string    // id of the entry that replaced this one
	SupersededOn time.Time // when it was superseded
	See          []string  // related entry ids (conflicts, pending questions)
	Notes        []string  // free metadata parts kept verbatim ("pending user confirmation")

	// Position, filled by the parser.
	File    string // memory-relative path: "MEMORY.md" or "topics/x.md"
	Topic   string // topic slug for entries of topic files
	Place   Place
	Section string // heading title of the section holding the entry
	Line    int    // 1-based line of the item's marker
	Start   int    // byte offset of the item's first line
	End     int    // byte offset just past the item's last line (incl. newline)
	HeadEnd int    // byte offset just past the item's first paragraph
	Raw     string // the item's bytes as they are in the file
	Marker  string // the list marker with its indentation and spacing: "- ", "*   ", "2. "
	Nested  bool   // the item has more than its first paragraph (kept on edits)
}

// Field keys of the metadata trailer, in rendering order.
const (
	keyConf       = "conf"
	keyScope      = "scope"
	keyRefs       = "refs"
	keyTags       = "tags"
	keyUpdated    = "updated"
	keyExpires    = "expires"
	keySuperseded = "superseded by"
	keySee        = "see"
)

// MetaSep separates the parts of the metadata trailer.
const MetaSep = " · "

// IsValidID reports whether id has one of the two id forms: prefix and
// number ("pref-001"), or prefix and random letters ("pref-kqxzbt", see
// RandomIDLetters).
func IsValidID(id string) bool {
	_, _, ok := splitID(id)
	return ok
}

// IsRandomID reports whether id has the random form: a prefix, "-", and
// MinRandomIDLetters to MaxRandomIDLetters letters of RandomIDLetters.
func IsRandomID(id string) bool {
	_, n, ok := splitID(id)
	return ok && n < 0
}

// IDPrefix returns the prefix of an id of either form ("dec-014" and
// "dec-kqxzbt" → "dec").
func IDPrefix(id string) (string, bool) {
	p, _, ok := splitID(id)
	return p, ok
}

// splitID splits "dec-014" into ("dec", 14). A random id ("dec-kqxzbt")
// has no number: it splits into ("dec", -1), so it never raises a
// high-water mark (every mark is at least 0).
func splitID(id string) (string, int, bool) {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 || i == len(id)-1 || len(id)-i-1 > max(9, MaxRandomIDLetters) {
		return "", 0, false
	}
	prefix := id[:i]
	for j := 0; j < len(prefix); j++ {
		c := prefix[j]
		if !(c >= 'a' && c <= 'z' || j > 0 && (c >= '0' && c <= '9' || c == '_')) {
			return "", 0, false
		}
	}
	suffix := id[i+1:]
	if isRandomSuffix(suffix) {
		return prefix, -1, true
	}
	if len(suffix) > 9 {
		return "", 0, false
	}
	n := 0
	for _, c := range []byte(suffix) {
		if c < '0' || c > '9' {
			return "", 0, false
		}
		n = n*10 + int(c-'0')
	}
	return prefix, n, true
}

// FormatID renders an id with at least three digits: ("dec", 14) → "dec-014".
func FormatID(prefix string, n int) string {
	if n < 0 {
		return fmt.Sprintf("%s-%03d", prefix, n)
	}
	// fmt's "%s-%03d" without fmt: an import formats a million ids.
	b := make([]byte, 0, len(prefix)+11)
	b = append(append(b, prefix...), '-')
	switch {
	case n < 10:
		b = append(b, '0', '0')
	case n < 100:
		b = append(b, '0')
	}
	return string(strconv.AppendInt(b, int64(n), 10))
}

// Global reports whether the entry has no scope (visible in every scope).
func (e *Entry) Global() bool { return len(e.Scope) == 0 }

// Date is the entry's most recent date: updated if set, else created.
func (e *Entry) Date() time.Time {
	if !e.Updated.IsZero() {
		return e.Updated
	}
	return e.Created
}

// Render renders the entry as one Markdown list item line, with newline.
func (e *Entry) Render() string { return e.renderWith("- ") }

// renderWith renders the entry behind the given list marker.
func (e *Entry) renderWith(marker string) string {
	var b strings.Builder
	content := OneLine(e.Content)
	meta := e.renderMeta()
	b.Grow(len(marker) + len(e.ID) + len(content) + len(meta) + 16) // one allocation
	b.WriteString(marker)
	if e.ID != "" {
		b.WriteString("[")
		b.WriteString(e.ID)
		b.WriteString("] ")
	}
	b.WriteString(content)
	switch {
	case meta == "":
		if _, _, ok := splitTrailer(content); ok {
			b.WriteString(" (·)") // keep a trailer-like ending part of the content
		}
	case !isTrailer(meta):
		b.WriteString(" (")
		b.WriteString(meta)
		b.WriteString(" ·)") // a lone free part: mark it as metadata
	default:
		b.WriteString(" (")
		b.WriteString(meta)
		b.WriteString(")")
	}
	b.WriteString("\n")
	return b.String()
}

func (e *Entry) renderMeta() string {
	parts := make([]string, 0, 8)
	if e.Source != "" {
		parts = append(parts, cleanMeta(e.Source))
	}
	if !e.Created.IsZero() {
		parts = append(parts, FormatTime(e.Created))
	}
	if e.HasConf {
		parts = append(parts, keyConf+" "+strconv.FormatFloat(e.Confidence, 'f', -1, 64))
	}
	list := func(key string, vals []string) {
		if len(vals) > 0 {
			clean := make([]string, 0, len(vals))
			for _, v := range vals {
				if v = cleanListItem(v); v != "" {
					clean = append(clean, v)
				}
			}
			if len(clean) > 0 {
				parts = append(parts, key+" "+strings.Join(clean, ", "))
			}
		}
	}
	list(keyScope, e.Scope)
	list(keyRefs, e.Refs)
	list(keyTags, e.Tags)
	if !e.Updated.IsZero() {
		parts = append(parts, keyUpdated+" "+FormatTime(e.Updated))
	}
	if !e.Expires.IsZero() {
		parts = append(parts, keyExpires+" "+FormatTime(e.Expires))
	}
	if e.SupersededBy != "" {
		s := keySuperseded + " " + e.SupersededBy
		if !e.SupersededOn.IsZero() {
			s += " on " + FormatTime(e.SupersededOn)
		}
		parts = append(parts, s)
	}
	list(keySee, e.See)
	for _, n := range e.Notes {
		if n = cleanMeta(n); n != "" {
			parts = append(parts, n)
		}
	}
	return strings.Join(parts, MetaSep)
}

// cleanMeta makes a free metadata part safe to render: one line, no
// separator, no parentheses that would end the trailer.
func cleanMeta(s string) string {
	s = OneLine(s)
	s = strings.ReplaceAll(s, "·", "-")
	s = parensToBrackets.Replace(s)
	return strings.TrimSpace(s)
}

var parensToBrackets = strings.NewReplacer("(", "[", ")", "]")

func cleanListItem(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(cleanMeta(s), ",", ";"))
}

// TrailerValue returns v as an entry's refs or tags trailer holds it: on
// one line, with the characters the trailer uses as markers replaced by
// look-alikes ("(" → "[", ")" → "]", "," → ";", "·" → "-"). For a value
// memctl derives itself, such as a session named after its file ("chat
// (1)"), where refusing it would refuse every candidate of the session.
func TrailerValue(v string) string { return cleanListItem(v) }

// OneLine folds whitespace runs (newlines included) into single spaces.
func OneLine(s string) string {
	if isOneLine(s) {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// isOneLine reports whether OneLine would return s as it is: white space
// only as single ASCII spaces between words.
func isOneLine(s string) bool {
	prevSpace := true // no space first
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf {
			return isOneLineRunes(s)
		}
		space := c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
		if space && (c != ' ' || prevSpace) {
			return false
		}
		prevSpace = space
	}
	return !prevSpace || s == ""
}

// isOneLineRunes is isOneLine for text that is not all ASCII.
func isOneLineRunes(s string) bool {
	prevSpace := true
	for _, r := range s {
		space := unicode.IsSpace(r)
		if space && (r != ' ' || prevSpace) {
			return false
		}
		prevSpace = space
	}
	return !prevSpace || s == ""
}

// FormatTime renders a time as a date when it is midnight UTC, else as an
// RFC 3339 UTC timestamp.
func FormatTime(t time.Time) string {
	// The text depends on the instant alone; the last one is kept, as an
	// import renders a million entries created at one.
	if last := lastFormatted.Load(); last != nil && last.t.Equal(t) {
		return last.s
	}
	u := t.UTC()
	s := u.Format(time.RFC3339)
	if u.Hour() == 0 && u.Minute() == 0 && u.Second() == 0 && u.Nanosecond() == 0 {
		s = u.Format("2006-01-02")
	}
	lastFormatted.Store(&formattedTime{t.Round(0), s}) // without a monotonic reading: Equal compares instants
	return s
}

// formattedTime is an instant and its FormatTime.
type formattedTime struct {
	t time.Time
	s string
}

// lastFormatted is the instant FormatTime formatted last.
var lastFormatted atomic.Pointer[formattedTime]

var timeLayouts = []string{"2006-01-02", time.RFC3339, "2006-01-02T15:04Z07:00", "2006-01-02 15:04", "2006-01-02T15:04:05"}

// ParseTime parses the date and time forms FORMAT.md allows.
func ParseTime(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return time.Time{}, false
	}
	switch {
	case len(s) == 10:
		return fastTime(s, false)
	case len(s) == 20 && s[10] == 'T' && s[19] == 'Z':
		return fastTime(s, true)
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

// fastTime parses "2006-01-02" or "2006-01-02T15:04:05Z" without the
// general layout machinery: memctl writes these two forms.
func fastTime(s string, clock bool) (time.Time, bool) {
	num := func(i, n int) (int, bool) {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	h, mi, sec := 0, 0, 0
	ok4, ok5, ok6 := true, true, true
	if clock {
		if s[13] != ':' || s[16] != ':' {
			return time.Time{}, false
		}
		h, ok4 = num(11, 2)
		mi, ok5 = num(14, 2)
		sec, ok6 = num(17, 2)
	}
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || mo < 1 || mo > 12 || d < 1 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, 0, time.UTC)
	if t.Day() != d { // 2026-02-30 and the like
		return time.Time{}, false
	}
	return t, true
}

// parseItemText splits an item's first-paragraph text into id, content and
// metadata. It returns problems for metadata it could not read (kept as notes).
func parseItemText(text string, firstLineLen int, e *Entry, slab *strSlab) (problems []string) {
	if strings.HasPrefix(text, "[") {
		if end := strings.IndexByte(text, ']'); end > 1 && IsValidID(text[1:end]) {
			e.ID = text[1:end]
			cut := len(text)
			text = strings.TrimLeft(text[end+1:], " \t")
			firstLineLen -= cut - len(text)
		}
	}
	content, meta, ok := splitTrailer(text)
	if !ok && firstLineLen > 0 && firstLineLen < len(text) {
		// A hand-wrapped item: the trailer may end its first line.
		if c, m, ok1 := splitTrailer(strings.TrimSpace(text[:firstLineLen])); ok1 {
			content, meta, ok = c+" "+strings.TrimSpace(text[firstLineLen:]), m, true
		}
	}
	e.Content = content
	if !ok {
		return nil
	}
	for rest, more := meta, true; more; {
		var part string
		part, rest, more = strings.Cut(rest, "·")
		if part = strings.TrimSpace(part); part == "" {
			continue
		}
		if p := e.parseMetaPart(part, slab); p != "" {
			problems = append(problems, p)
		}
	}
	return problems
}

// splitTrailer finds a final "( … )" group that is a metadata trailer: it
// must contain a "·" separator or be a single date.
func splitTrailer(text string) (content, meta string, ok bool) {
	if !strings.HasSuffix(text, ")") {
		return text, "", false
	}
	depth := 0
	for i := len(text) - 1; i >= 0; i-- {
		switch text[i] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				inner := text[i+1 : len(text)-1]
				if isTrailer(inner) {
					return strings.TrimSpace(text[:i]), inner, true
				}
				return text, "", false
			}
		}
	}
	return text, "", false
}

// isTrailer reports whether the inside of a final parenthesised group is
// metadata: it has a "·" separator, is a date, or is one known field.
func isTrailer(inner string) bool {
	if strings.Contains(inner, "·") {
		return true
	}
	if _, ok := ParseTime(inner); ok {
		return true
	}
	key, _, _ := strings.Cut(strings.TrimSpace(inner), " ")
	switch key {
	case keyConf, keyScope, keyRefs, keyTags, keyUpdated, keyExpires, keySee:
		return true
	}
	return strings.HasPrefix(strings.TrimSpace(inner), keySuperseded+" ")
}

// strSlab hands out small string slices carved from one larger array, so
// parsing a file does not allocate per entry. Each slice's capacity is its
// own length, so appending to it later copies instead of overwriting a
// neighbour.
type strSlab struct{ buf []string }

func (s *strSlab) make(n int) []string {
	if s == nil || n > 64 {
		return make([]string, 0, n)
	}
	if cap(s.buf)-len(s.buf) < n {
		s.buf = make([]string, 0, 1024)
	}
	start := len(s.buf)
	s.buf = s.buf[:start+n]
	return s.buf[start : start : start+n]
}

// appendList appends the comma-separated values of v to dst, allocating
// at most once.
func appendList(dst []string, v string, slab *strSlab) []string {
	if dst == nil {
		dst = slab.make(strings.Count(v, ",") + 1)
	}
	for more := true; more; {
		var item string
		item, v, more = strings.Cut(v, ",")
		if item = strings.TrimSpace(item); item != "" {
			dst = append(dst, item)
		}
	}
	return dst
}

// parseMetaPart reads one trailer part into e; it returns a problem text for
// a known key with an unreadable value (the part is then kept as a note).
func (e *Entry) parseMetaPart(part string, slab *strSlab) string {
	if t, ok := ParseTime(part); ok && e.Created.IsZero() {
		e.Created = t
		return ""
	}
	key, val, _ := strings.Cut(part, " ")
	val = strings.TrimSpace(val)
	bad := func(what string) string {
		e.Notes = append(e.Notes, part)
		return fmt.Sprintf("unreadable %s in metadata part %q", what, part)
	}
	switch key {
	case keyConf:
		f, err := strconv.ParseFloat(val, 64)
		if err != nil || f < 0 || f > 1 {
			return bad("confidence (want a number in [0,1])")
		}
		e.Confidence, e.HasConf = f, true
		return ""
	case keyScope:
		e.Scope = appendList(e.Scope, val, slab)
		return ""
	case keyRefs:
		e.Refs = appendList(e.Refs, val, slab)
		return ""
	case keyTags:
		e.Tags = appendList(e.Tags, val, slab)
		return ""
	case keySee:
		e.See = appendList(e.See, val, slab)
		return ""
	case keyUpdated, keyExpires:
		t, ok := ParseTime(val)
		if !ok {
			return bad(key + " date")
		}
		if key == keyUpdated {
			e.Updated = t
		} else {
			e.Expires = t
		}
		return ""
	case "superseded":
		rest, ok := strings.CutPrefix(val, "by ")
		if !ok {
			break
		}
		id, on, _ := strings.Cut(strings.TrimSpace(rest), " on ")
		e.SupersededBy = strings.TrimSpace(id)
		if on != "" {
			t, ok := ParseTime(on)
			if !ok {
				return bad("superseded date")
			}
			e.SupersededOn = t
		}
		return ""
	}
	if e.Source == "" && len(e.Notes) == 0 {
		e.Source = part
	} else {
		e.Notes = append(e.Notes, part)
	}
	return ""
}

// ValidText checks text memctl is about to store: valid UTF-8, no NUL or
// other control characters except tab and newline, within max bytes.
func ValidText(what, s string, max int) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8", what)
	}
	if max > 0 && len(s) > max {
		return fmt.Errorf("%s is %d bytes, over the limit of %d", what, len(s), max)
	}
	for _, r := range s {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r == 0x7f {
			return fmt.Errorf("%s contains control character %U", what, r)
		}
	}
	return nil
}
