package inject

import (
	"math/rand"
	"strings"
	"testing"

	"github.com/memctl/memctl/mdmem/redact"
)

// TestPieceCountExact: counting a text as the sum of its memoised chunks
// (the cache build) gives what the tokenizer gives for the whole text, for
// texts made to stress the cuts: spaces in runs and before digits, digit
// runs of every length next to letters, other numerals and white space,
// contractions, marks, CJK, line ends, invalid UTF-8.
func TestPieceCountExact(t *testing.T) {
	t.Parallel() // long: runs beside the package's other tests
	parts := []string{" ", " ", " ", "  ", "   ", "\t", "\n", "\r\n", "\r", "a", "Z", "word", "Order", "don't", "'s", "'S", "'ll",
		"é", "ü", "Ĳ", "\u0301", "缓存", "数据库", "٣", "²", "０", "Ⅻ", "0", "7", "12", "123", "1234", "12345", "1234567",
		"-", "[", "]", "(", ")", "·", " · ", "/", "//", "```", "`", "\u00a0", "\u2028", "\u3000", "\u200b", "\xff", "\xe2\x82",
		"🙂", "…", "v1.2", "2025-01-05", "2025-01-05T10:00:00Z", ",", ".", "!?", "_", "\x85", "\x1f", "#", "- [", "] ", ")\n",
		"fact-0042", " days old", "x9", "9x", "$", "%", "+1", "'", "\"", "ß", "İ", "ǅ", "ʰ", "々", "ー"}
	rng := rand.New(rand.NewSource(11))
	for _, name := range []string{"o200k", "cl100k"} {
		cnt, _ := NewCounter(name)
		pc := newPieceCounter(cnt)
		n := 6000
		if testing.Short() {
			n = 1000
		}
		for i := 0; i < n; i++ {
			var b strings.Builder
			for k := rng.Intn(24); k >= 0; k-- {
				b.WriteString(parts[rng.Intn(len(parts))])
			}
			s := b.String()
			if got, want := pc.count([]byte(s)), cnt.Count(s); got != want {
				t.Fatalf("%s: %q: summed %d, whole %d", name, s, got, want)
			}
		}
	}
}

// TestAppendClean: appendClean gives what redact.Neutralise, strings.Map,
// strings.Fields and the metadata replacer give, byte for byte.
func TestAppendClean(t *testing.T) {
	refText := func(s string) string {
		return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
			if redact.Hidden(r) {
				return -1
			}
			if r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 || (r >= 0x80 && r < 0xa0) {
				return ' '
			}
			return r
		}, s)), " ")
	}
	refMeta := func(s string) string {
		return strings.TrimSpace(strings.NewReplacer("(", "[", ")", "]", "·", "-").Replace(refText(s)))
	}
	parts := []string{" ", "  ", "\t", "\n", "\r", "\v", "\f", "\x00", "\x1f", "\x7f", "\u0085", "\u00a0", "\u2028", "\u2029", "\u3000",
		"\u1680", "\u200b", "\x9f", "\xc2\x9f", "\xff", "\xe2\x82", "\ufffd", "a", "é", "缓存", "(", ")", "·", "x(y)", "🙂", "-"}
	rng := rand.New(rand.NewSource(4))
	for i := 0; i < 20000; i++ {
		var b strings.Builder
		for k := rng.Intn(12); k >= 0; k-- {
			b.WriteString(parts[rng.Intn(len(parts))])
		}
		s := b.String()
		if got, want := cleanText(s), refText(s); got != want {
			t.Fatalf("cleanText(%q) = %q, want %q", s, got, want)
		}
		if got, want := cleanMeta(s), refMeta(s); got != want {
			t.Fatalf("cleanMeta(%q) = %q, want %q", s, got, want)
		}
	}
}
