package redact

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
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

// Ways normalise joins the pieces of a token.
const (
	joinNone   = iota
	joinLines  // white space holding a line break between token bytes
	joinSpaces // also one space between two runs of at least minSplitRun token bytes
)

// minSplitRun is the shortest piece on each side of a space that
// joinSpaces joins: "ghp_R8kQ2vXm9LpT4s Wz7N…" reads as one token, two
// words of prose do not become a key.
const minSplitRun = 8

// tokenRun counts the token bytes of s from i in direction d (-1 or 1).
func tokenRun(s string, i, d int) int {
	n := 0
	for ; i >= 0 && i < len(s) && isTokenByte(s[i]); i += d {
		n++
	}
	return n
}

// normalise returns text with every hidden character removed and every
// other rune in NFKC form (full-width digits become ASCII digits, ligatures
// letters). With joinLines, a run of white space that holds a line break
// and stands between two token bytes is removed too, so a key wrapped
// over two lines reads as one; with joinSpaces, also a single space
// between two long runs of token bytes, so a key split by a space does.
func normalise(text string, mode int) normText {
	join := mode != joinNone
	ascii, plain := true, true
	for i := 0; i < len(text) && plain; i++ {
		switch c := text[i]; {
		case c >= utf8.RuneSelf:
			ascii = false
			r, _ := utf8.DecodeRuneInString(text[i:])
			plain = !Hidden(r)
		case join && c == '\n', mode == joinSpaces && c == ' ':
			plain = false
		}
	}
	if plain && (ascii || norm.NFKC.IsNormalString(text)) {
		return normText{s: text, size: len(text)} // already in normal form
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
				split := mode == joinSpaces && j == i+1 && text[i] == ' ' && tokenRun(cur, len(cur)-1, -1) >= minSplitRun && tokenRun(text, j, 1) >= minSplitRun
				if (nl || split) && len(cur) > 0 && isTokenByte(cur[len(cur)-1]) && j < len(text) && isTokenByte(text[j]) {
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
	return normText{s: b.String(), off: off, size: len(text)}
}

// Normalise returns text in NFKC form with hidden characters (see Hidden)
// removed: the form the detectors read.
func Normalise(text string) string { return normalise(text, joinNone).s }

// confusables maps letters that look like Latin ones (Cyrillic, Greek,
// Armenian, Latin IPA and small-capital forms NFKC keeps) to the Latin
// letter a reader sees, for the detectors' copy of a text only: "іgnоre"
// with a Cyrillic і and о reads as "ignore".
var confusables = map[rune]rune{
	'а': 'a', 'в': 'b', 'е': 'e', 'ё': 'e', 'з': '3', 'к': 'k', 'м': 'm', 'н': 'h', 'о': 'o', 'р': 'p', 'с': 'c',
	'т': 't', 'у': 'y', 'х': 'x', 'ѕ': 's', 'і': 'i', 'ї': 'i', 'ј': 'j', 'ԁ': 'd', 'ԛ': 'q', 'ԝ': 'w', 'һ': 'h',
	'ӏ': 'l', 'ո': 'n', 'ս': 'u', 'օ': 'o', 'ց': 'g', 'հ': 'h', 'ɑ': 'a', 'ɡ': 'g', 'ɩ': 'i', 'ı': 'i', 'ȷ': 'j',
	'α': 'a', 'β': 'b', 'ε': 'e', 'η': 'n', 'ι': 'i', 'κ': 'k', 'ν': 'v', 'ο': 'o', 'ρ': 'p', 'τ': 't', 'υ': 'u',
	'χ': 'x', 'ω': 'w', 'ϲ': 'c', 'ϳ': 'j', 'ѵ': 'v', 'ᴀ': 'a', 'ʙ': 'b', 'ᴄ': 'c', 'ᴅ': 'd', 'ᴇ': 'e', 'ɢ': 'g',
	'ʜ': 'h', 'ɪ': 'i', 'ᴊ': 'j', 'ᴋ': 'k', 'ʟ': 'l', 'ᴍ': 'm', 'ɴ': 'n', 'ᴏ': 'o', 'ᴘ': 'p', 'ʀ': 'r', 'ꜱ': 's',
	'ᴛ': 't', 'ᴜ': 'u', 'ᴠ': 'v', 'ᴡ': 'w', 'ʏ': 'y', 'ᴢ': 'z',
	'А': 'A', 'В': 'B', 'Е': 'E', 'К': 'K', 'М': 'M', 'Н': 'H', 'О': 'O', 'Р': 'P', 'С': 'C', 'Т': 'T', 'Х': 'X',
	'У': 'Y', 'Ѕ': 'S', 'І': 'I', 'Ј': 'J', 'Α': 'A', 'Β': 'B', 'Ε': 'E', 'Η': 'H', 'Ι': 'I', 'Κ': 'K', 'Μ': 'M',
	'Ν': 'N', 'Ο': 'O', 'Ρ': 'P', 'Τ': 'T', 'Υ': 'Y', 'Χ': 'X', 'Ζ': 'Z',
}

// leet maps the digits and signs that stand for letters inside a word
// ("1gn0re", "pr3vious", "$ecrets") to them. "@" is not one: it is an
// address's.
var leet = map[rune]rune{'0': 'o', '1': 'i', '3': 'e', '4': 'a', '5': 's', '7': 't', '$': 's'}

// Fold returns the form of text the instruction and secret detectors
// read: Normalise's (NFKC, hidden characters removed), then letters that
// only look Latin folded to the Latin letter, variation selectors and
// combining marks dropped, digits standing for letters inside a word read
// as those letters, and words spelled out letter by letter ("i g n o r e",
// "i.g.n.o.r.e", "i-g-n-o-r-e") joined. It is for detection only: text is
// stored as given.
func Fold(text string) string {
	s := Normalise(text)
	if !isASCII(s) { // ASCII has no marks or look-alikes to fold
		var b strings.Builder
		b.Grow(len(s))
		for _, r := range s {
			switch {
			case r >= 0xFE00 && r <= 0xFE0F, r >= 0xE0100 && r <= 0xE01EF, unicode.Is(unicode.Mn, r):
				continue // variation selectors, combining marks ("i̇gnore")
			}
			if c, ok := confusables[r]; ok {
				r = c
			}
			b.WriteRune(r)
		}
		s = b.String()
	}
	s = dropEmphasis(s)
	if mayHoldLeetWord(s) {
		s = readLeetWords(s)
	}
	if !mayHoldSpelledOut(s) {
		return s
	}
	return spelledOut.ReplaceAllStringFunc(s, func(run string) string {
		return segment(strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) {
				return r
			}
			return -1
		}, run))
	})
}

// readLeetWords reads the digits standing for letters in s's leetWords.
func readLeetWords(s string) string {
	return leetWord.ReplaceAllStringFunc(s, func(w string) string {
		letters := 0
		for _, r := range w {
			if unicode.IsLetter(r) {
				letters++
			}
		}
		if letters < 2 {
			return w // a number, a version ("v2"), a unit ("5GB") stays
		}
		read := func(one rune) string {
			return strings.Map(func(r rune) rune {
				if r == '1' {
					return one
				}
				if l, ok := leet[r]; ok {
					return l
				}
				return r
			}, w)
		}
		// 1 stands for i or l: l when only that gives a word the
		// detectors know ("ru1es" is "rules", "prev1ous" "previous").
		if i := read('i'); !strings.ContainsRune(w, '1') || detectorWords()[strings.ToLower(i)] {
			return i
		} else if l := read('l'); detectorWords()[strings.ToLower(l)] {
			return l
		} else {
			return i
		}
	})
}

// isASCII reports whether s is all ASCII.
func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isLetter is unicode.IsLetter, without a call for ASCII (whose letters
// are A to Z and a to z).
func isLetter(r rune) bool {
	if r < utf8.RuneSelf {
		return r|0x20 >= 'a' && r|0x20 <= 'z'
	}
	return unicode.IsLetter(r)
}

// mayHoldLeetWord reports whether s has a letter right next to a digit or
// $, which every leetWord match has: without one, Fold skips the regexp
// (most texts, read at import's rate of a million lines).
func mayHoldLeetWord(s string) bool {
	prevLetter, prevDigit := false, false
	for _, r := range s {
		letter := isLetter(r)
		digit := r >= '0' && r <= '9' || r == '$'
		if letter && prevDigit || digit && prevLetter {
			return true
		}
		prevLetter, prevDigit = letter, digit
	}
	return false
}

// mayHoldSpelledOut reports whether s has a letter, a separator, a letter,
// a separator and a letter in a row, which every spelledOut match has.
func mayHoldSpelledOut(s string) bool {
	k := 0 // length of the letter-separator alternation ending here, from a letter
	for _, r := range s {
		switch {
		case isLetter(r):
			if k%2 == 0 && k > 0 {
				k++
			} else {
				k = 1
			}
			if k >= 5 {
				return true
			}
		case r == ' ' || r == '.' || r == '-' || r == '_' || r == '*':
			if k%2 == 1 {
				k++
			} else {
				k = 0
			}
		default:
			k = 0
		}
	}
	return false
}

// segment splits letters joined from a spelled-out run that held more
// than one word ("ignoreallprevious" from "i g n o r e a l l p r e v i o
// u s") into the detectors' words, longest first, where it can; other
// letters stay as they are.
func segment(joined string) string {
	low := strings.ToLower(joined)
	if len(low) < 8 || len(low) != len(joined) {
		return joined
	}
	words := detectorWords()
	var parts []string
	last := 0
	for i := 0; i < len(low); {
		n := 0
		for j := min(len(low), i+16); j >= i+3; j-- {
			if words[low[i:j]] {
				n = j - i
				break
			}
		}
		if n == 0 {
			i++
			continue
		}
		if last < i {
			parts = append(parts, joined[last:i])
		}
		parts = append(parts, joined[i:i+n])
		i += n
		last = i
	}
	if last < len(joined) {
		parts = append(parts, joined[last:])
	}
	return strings.Join(parts, " ")
}

// dropEmphasis removes Markdown emphasis around words ("**ignore**",
// "_all_", "~~rules~~"): a run of *, _ or ~ with a letter or digit on at
// most one side. An identifier's inner "_" (tool_call) stays.
func dropEmphasis(s string) string {
	if !strings.ContainsAny(s, "*_~") {
		return s
	}
	word := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	rs := []rune(s)
	var b strings.Builder
	for i := 0; i < len(rs); {
		if !strings.ContainsRune("*_~", rs[i]) {
			b.WriteRune(rs[i])
			i++
			continue
		}
		j := i
		for j < len(rs) && strings.ContainsRune("*_~", rs[j]) {
			j++
		}
		if i > 0 && word(rs[i-1]) && j < len(rs) && word(rs[j]) {
			b.WriteString(string(rs[i:j])) // inside a word
		} else {
			b.WriteByte(' ')
		}
		i = j
	}
	return b.String()
}

// detectorWords are the words the instruction patterns spell out, for
// reading a 1 inside a word.
var detectorWords = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, p := range patterns {
		for _, w := range regexp.MustCompile(`[a-z]{3,}`).FindAllString(p.re, -1) {
			m[w] = true
			m[w+"s"] = true
		}
	}
	return m
})

// leetWord is a word that mixes letters with digits or $ standing for
// letters.
var leetWord = regexp.MustCompile(`\pL[\pL0-9$]*[0-9$][\pL0-9$]*\pL|\pL[0-9$]+|[0-9$]+\pL`)

// spelledOut is a word spelled letter by letter: three or more single
// letters, each followed by one space, dot, dash, underscore or star.
var spelledOut = regexp.MustCompile(`\b(?:\pL[ .\-_*]){2,}\pL\b`)
