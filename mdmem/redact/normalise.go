package redact

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Hidden reports whether r is a character that renders as nothing or
// reorders text without showing: zero-width characters (U+200B–U+200D,
// U+2060–U+2064, U+FEFF, U+180E, the soft hyphen U+00AD), bidi controls
// (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and the Unicode
// tag block (U+E0000–U+E007F, "ASCII smuggling").
func Hidden(r rune) bool {
	switch {
	case r < 0xAD:
		return false
	case r == 0xAD, r == 0x61C, r == 0x180E, r >= 0x200B && r <= 0x200F, r >= 0x202A && r <= 0x202E,
		r >= 0x2060 && r <= 0x2064, r >= 0x2066 && r <= 0x2069, r == 0xFEFF, r >= 0xE0000 && r <= 0xE007F:
		return true
	}
	return false
}

// normText is a normalised copy of a text that remembers, for each of its
// bytes, the byte offset in the original it came from, so findings in the
// copy map back to the original.
type normText struct {
	s    string
	off  []int // off[i]: original offset of the rune that gave byte i; nil when s is the original
	size int   // length of the original
}

// orig maps a byte offset of the copy (0..len(s)) to the original.
func (n *normText) orig(i int) int {
	if n.off == nil {
		return i
	}
	if i >= len(n.off) {
		return n.size
	}
	return n.off[i]
}

// isTokenByte reports whether b may be part of a key or token: a run of
// them split by a line break is joined when join is set.
func isTokenByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '-' || b == '+' || b == '/' || b == '=' || b == '.'
}

// normalise returns text with every hidden character removed and every
// other rune in NFKC form (full-width digits become ASCII digits, ligatures
// letters). With join, a run of white space that holds a line break and
// stands between two token bytes is removed too, so a key wrapped over two
// lines reads as one.
func normalise(text string, join bool) *normText {
	ascii, plain := true, true
	for i := 0; i < len(text) && plain; i++ {
		switch c := text[i]; {
		case c >= utf8.RuneSelf:
			ascii = false
			r, _ := utf8.DecodeRuneInString(text[i:])
			plain = !Hidden(r)
		case join && c == '\n':
			plain = false
		}
	}
	if plain && (ascii || norm.NFKC.IsNormalString(text)) {
		return &normText{s: text, size: len(text)} // already in normal form
	}
	var b strings.Builder
	b.Grow(len(text))
	off := make([]int, 0, len(text)+1)
	emit := func(s string, at int) {
		b.WriteString(s)
		for range len(s) {
			off = append(off, at)
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			if join && (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
				j, nl := i, false
				for j < len(text) && (text[j] == ' ' || text[j] == '\t' || text[j] == '\r' || text[j] == '\n') {
					nl = nl || text[j] == '\n'
					j++
				}
				cur := b.String()
				if nl && len(cur) > 0 && isTokenByte(cur[len(cur)-1]) && j < len(text) && isTokenByte(text[j]) {
					i = j
					continue
				}
				for k := i; k < j; k++ {
					emit(text[k:k+1], k)
				}
				i = j
				continue
			}
			emit(text[i:i+1], i)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		if !Hidden(r) {
			emit(norm.NFKC.String(text[i:i+size]), i)
		}
		i += size
	}
	return &normText{s: b.String(), off: off, size: len(text)}
}

// Normalise returns text in NFKC form with hidden characters (see Hidden)
// removed: the form the detectors read.
func Normalise(text string) string { return normalise(text, false).s }
