package inject

import (
	"fmt"
	"math"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/tiktoken-go/tokenizer"
)

// Counter counts tokens the way the model family does.
type Counter interface {
	// Count returns the number of tokens of s.
	Count(s string) int
	// Name is the tokenizer's name as configured ("o200k", "chars:4").
	Name() string
}

// TokenizerNames are the tokenizers memctl knows; "chars:N" is also
// accepted.
var TokenizerNames = []string{"o200k", "cl100k", "chars:N"}

// NewCounter returns the counter for a tokenizer spec:
//
//	o200k   GPT-4o, GPT-4.1, GPT-5, o1/o3/o4 (also: gpt-4o, gpt-5, …)
//	cl100k  GPT-4, GPT-3.5 (also: gpt-4, gpt-3.5-turbo)
//	chars:N one token per N characters (runes), rounded up per text; for
//	        models whose tokenizer memctl does not ship. N may be a decimal.
//	        CJK characters count one token each, since BPE tokenizers spend
//	        about one token per ideograph.
//
// The BPE tables are compiled into memctl; nothing is downloaded. They are
// loaded on first use (tens of milliseconds), so a command that finds every
// count in its cache never loads them.
func NewCounter(spec string) (Counter, error) {
	s := strings.ToLower(strings.TrimSpace(spec))
	switch s {
	case "o200k", "o200k_base", "gpt-4o", "gpt-4o-mini", "gpt-4.1", "gpt-5", "o1", "o3", "o4-mini":
		return &bpeCounter{name: "o200k", enc: tokenizer.O200kBase}, nil
	case "cl100k", "cl100k_base", "gpt-4", "gpt-3.5-turbo", "gpt-35-turbo":
		return &bpeCounter{name: "cl100k", enc: tokenizer.Cl100kBase}, nil
	}
	if rest, ok := strings.CutPrefix(s, "chars:"); ok {
		n, err := strconv.ParseFloat(rest, 64)
		if err != nil || !(n >= 0.5 && n <= 100) {
			return nil, fmt.Errorf("tokenizer %q: want chars:N with N a number of characters per token between 0.5 and 100", spec)
		}
		return charCounter{per: n, name: "chars:" + rest}, nil
	}
	return nil, fmt.Errorf("unknown tokenizer %q (known: o200k, cl100k, chars:N — use chars:4 for an unknown English model)", spec)
}

type bpeCounter struct {
	name   string
	enc    tokenizer.Encoding
	once   sync.Once
	codec  tokenizer.Codec
	err    error
	loaded atomic.Bool // the tables were loaded (tests check inject avoids it)
}

func (b *bpeCounter) Name() string { return b.name }

func (b *bpeCounter) Count(s string) int {
	if s == "" {
		return 0
	}
	b.once.Do(func() { b.codec, b.err = tokenizer.Get(b.enc); b.loaded.Store(true) })
	if b.err != nil {
		panic(fmt.Sprintf("tokenizer %s: %v", b.name, b.err)) // the tables are compiled in
	}
	n, err := b.codec.Count(s)
	if err != nil {
		// Only invalid input can fail; fall back to a safe upper bound.
		return len(s)
	}
	return n
}

type charCounter struct {
	per  float64
	name string
}

func (c charCounter) Name() string { return c.name }

func (c charCounter) Count(s string) int {
	if s == "" {
		return 0
	}
	other, cjk := 0, 0
	for _, r := range s {
		if r >= 0x2E80 && isCJK(r) {
			cjk++
		} else {
			other++
		}
	}
	return cjk + int(math.Ceil(float64(other)/c.per))
}

// tokTable holds token counts computed when the index cache is built, for
// one BPE tokenizer, so that inject on a cached memory never loads the
// tokenizer. Counts add up because every piece they are summed from starts
// at a boundary of the tokenizer's pre-tokeniser (a line start; the suffix
// of a date line after its last digit; the parts of a date, split at its
// hyphens and into runs of at most three digits; the space before an id
// in the footer, which ends with a letter or digit), and BPE never merges
// across such boundaries. The property test checks the sums against
// counting whole blocks.
type tokTable struct {
	name   string
	consts map[string]int // fixed strings: header, fences, headings, date line suffixes, footer pieces
	digits []byte         // tokens of "0".."9", "00".."99", "000".."999"
	line   []uint16       // per note: tokens of its compact line; 0 unknown
	ref    []uint8        // per note: tokens of " "+Ref() in the footer; 0 unknown
	keep   *cacheFile     // the mapping line and ref view, if read from the cache

	// A table joined from the cache's segments has no line and ref of
	// its own: they are each segment's (parts), whose first notes are
	// start.
	parts []*tokTable
	start []int

	// pieces are the counts of the chunks the lines were summed from
	// (pieceCounter), kept so that an update of the cache counts the
	// lines of the changed files without loading the tokenizer when their
	// chunks are known. Only builds and updates have them.
	pieces map[string]uint32
}

const (
	digitTableLen = 1110
	maxPreFence   = 16 // fence lines counted in advance: 3..16 backticks
)

// constStrings are the fixed strings whose counts the table keeps, with
// the date line suffixes and section headings of the notes' sources.
func constStrings(c *Corpus) []string {
	s := []string{DefaultHeader, headCore, headRetrieved, todayHead, " ", "\n", "-",
		footHead, footMoreHead, footMoreTail, ","}
	for _, r := range reasonOrder {
		for _, end := range footEnds {
			s = append(s, footTail(r, end))
		}
	}
	for n := 3; n <= maxPreFence; n++ {
		f := strings.Repeat("`", n)
		s = append(s, f+fenceInfo+"\n", f+"\n")
	}
	seen := map[string]bool{}
	for i := 0; i < c.Len(); i++ {
		src := c.Note(i).Source
		if seen[src] {
			continue
		}
		seen[src] = true
		m := srcMark(src)
		s = append(s, groupSuffix(src, false), groupSuffix(src, true))
		for _, h := range []string{headCore, headRetrieved} {
			s = append(s, marks{m, false}.heading(h), marks{m, true}.heading(h))
		}
	}
	// Date lines and headings of a section whose heading says the marks.
	s = append(s, marks{}.suffix(), marks{stale: true}.suffix(),
		marks{stale: true}.heading(headCore), marks{stale: true}.heading(headRetrieved))
	return s
}

func digitIndex(d string) int {
	v, _ := strconv.Atoi(d)
	switch len(d) {
	case 1:
		return v
	case 2:
		return 10 + v
	}
	return 110 + v
}

// buildTokTable counts every note's line for a BPE counter (nil for other
// counters: chars:N is cheap to count directly), on all CPUs.
func buildTokTable(c *Corpus, cnt Counter) *tokTable {
	if _, ok := cnt.(*bpeCounter); !ok {
		return nil
	}
	n := c.Len()
	t := &tokTable{name: cnt.Name(), consts: map[string]int{}, digits: make([]byte, digitTableLen),
		line: make([]uint16, n), ref: make([]uint8, n)}
	for _, s := range constStrings(c) {
		t.consts[s] = cnt.Count(s)
	}
	for l := 1; l <= 3; l++ {
		for v := 0; v < [...]int{0, 10, 100, 1000}[l]; v++ {
			d := fmt.Sprintf("%0*d", l, v)
			if k := cnt.Count(d); k < 256 {
				t.digits[digitIndex(d)] = byte(k)
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), 1+n/4096)
	pcs := make([]*pieceCounter, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		pcs[w] = newPieceCounter(cnt)
		go func(w int) {
			defer wg.Done()
			var line []byte
			for i := w; i < n; i += workers {
				line = t.count(pcs[w], i, c.Note(i), line)
			}
		}(w)
	}
	wg.Wait()
	t.pieces = pcs[0].memo
	for _, pc := range pcs[1:] {
		for s, k := range pc.memo {
			t.pieces[s] = k
		}
	}
	return t
}

// count counts note i, n, into the table (line is scratch space, returned
// for reuse).
func (t *tokTable) count(pc *pieceCounter, i int, n *Note, line []byte) []byte {
	line = appendLine(line[:0], n)
	if k := pc.count(line); k < math.MaxUint16 {
		t.line[i] = uint16(k)
	}
	if ref := n.Ref(); refCountable(ref) {
		line = append(append(line[:0], ' '), ref...)
		if k := pc.count(line); k < 256 {
			t.ref[i] = uint8(k)
		}
	}
	return line
}

// pieceCounter counts a BPE counter's tokens of a text as the sum of the
// counts of its chunks, each distinct chunk counted once and remembered: a
// memory has far fewer distinct words than words, so a rebuild runs the
// tokenizer on each word once instead of on every line.
//
// The sum is exact because every cut is at a boundary of the o200k and
// cl100k pre-tokenisers, whose pieces BPE never merges across, and no
// chunk ends in white space (the one place where a piece depends on the
// text after it: `\s+(?!\S)`). In both, a piece holding a space after a
// non-space character does not exist (letter pieces are an optional
// leading non-letter, then letters, marks and a contraction; punctuation
// pieces an optional leading space, then neither spaces, letters nor
// digits, then CR, LF or "/"; white-space pieces hold only white space),
// and digits are only in pieces of one to three \p{N} characters. So the
// text is cut
//
//   - before a space that follows a printable ASCII character,
//   - before an ASCII digit that follows a printable ASCII non-digit,
//   - after an ASCII digit followed by an ASCII non-digit,
//   - every three digits into a run of ASCII digits that starts the text
//     or follows an ASCII character.
//
// TestPieceCountExact checks the sums against counting whole texts.
type pieceCounter struct {
	cnt  Counter
	memo map[string]uint32

	// knownOnly: a chunk the memo does not hold counts unknownPiece
	// instead of running the tokenizer (its line's count is left unknown).
	knownOnly bool
}

// unknownPiece is more than any count a table keeps, so a line holding an
// unknown chunk is left 0 (unknown).
const unknownPiece = math.MaxUint16

// The memo keeps up to maxPieceMemo chunks, long ones too: a segment
// rebuilt after an edit counts its unchanged lines from them alone.
const maxPieceMemo = 1 << 18

func newPieceCounter(cnt Counter) *pieceCounter {
	return &pieceCounter{cnt: cnt, memo: make(map[string]uint32, 1024)}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// printable reports a printable ASCII character other than space.
func printable(c byte) bool { return ' ' < c && c < 0x7f }

func (p *pieceCounter) count(s []byte) int {
	total, start := 0, 0
	run := -1 // start of the current digit run, if it starts a piece
	for i := 1; i < len(s); i++ {
		c, prev := s[i], s[i-1]
		cut := false
		switch {
		case isDigit(c) && !isDigit(prev):
			run = -1
			if prev < utf8.RuneSelf {
				run = i
			}
			cut = printable(prev)
		case isDigit(c):
			if i == 1 {
				run = 0
			}
			cut = run >= 0 && (i-run)%3 == 0
		case isDigit(prev):
			cut = c < utf8.RuneSelf
		default:
			cut = c == ' ' && printable(prev)
		}
		if cut {
			total += p.piece(s[start:i])
			start = i
		}
	}
	return total + p.piece(s[start:])
}

func (p *pieceCounter) piece(b []byte) int {
	if len(b) == 0 {
		return 0
	}
	if n, ok := p.memo[string(b)]; ok {
		return int(n)
	}
	if p.knownOnly {
		return unknownPiece
	}
	s := string(b)
	n := p.cnt.Count(s)
	if len(p.memo) >= maxPieceMemo {
		clear(p.memo)
	}
	p.memo[s] = uint32(n)
	return n
}

// refCountable: an id ending in an ASCII letter or digit ends a
// pre-tokeniser piece before the "," or "." that follows it.
func refCountable(ref string) bool {
	if ref == "" {
		return false
	}
	b := ref[len(ref)-1]
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}

// tokenCtx counts for one inject: from the corpus's table when it was built
// for this counter, else with the counter (loading it on first use). With
// contentOnly, the frame and date lines count nothing.
type tokenCtx struct {
	cnt         Counter
	t           *tokTable
	contentOnly bool
	memo        map[string]int // fixed strings and date lines counted without the table
}

func (c *Corpus) tokens(cnt Counter, contentOnly bool) *tokenCtx {
	x := &tokenCtx{cnt: cnt, contentOnly: contentOnly}
	if c.tok != nil && !contentOnly && c.tok.name == cnt.Name() {
		x.t = c.tok
	}
	return x
}

func (x *tokenCtx) str(s string) int {
	if x.t != nil {
		if n, ok := x.t.consts[s]; ok {
			return n
		}
	}
	return x.count(s)
}

// count counts s with the counter, once per inject: packing asks for the
// same headings and date lines again and again.
func (x *tokenCtx) count(s string) int {
	if n, ok := x.memo[s]; ok {
		return n
	}
	if x.memo == nil {
		x.memo = map[string]int{}
	}
	n := x.cnt.Count(s)
	x.memo[s] = n
	return n
}

// frame counts a piece of the frame (header, fence, heading).
func (x *tokenCtx) frame(s string) int {
	if x.contentOnly {
		return 0
	}
	return x.str(s)
}

// digitRun counts a run of ASCII digits: pieces of three from the left.
func (x *tokenCtx) digitRun(d string) (int, bool) {
	total := 0
	for len(d) > 0 {
		g := d[:min(3, len(d))]
		d = d[len(g):]
		k := int(x.t.digits[digitIndex(g)])
		if k == 0 {
			return 0, false
		}
		total += k
	}
	return total, true
}

// day counts a date, 2026-01-05 or, on a date line without the year,
// 01-05: digit runs and hyphens.
func (x *tokenCtx) day(day string) (int, bool) {
	var parts [3]string
	n := 0
	switch {
	case x.t == nil:
		return 0, false
	case len(day) == len("2006-01-02"):
		parts, n = [3]string{day[:4], day[5:7], day[8:]}, 3
	case len(day) == len("01-02"):
		parts, n = [3]string{day[:2], day[3:]}, 2
	default:
		return 0, false
	}
	total := (n - 1) * x.str("-")
	for _, part := range parts[:n] {
		k, ok := x.digitRun(part)
		if !ok {
			return 0, false
		}
		total += k
	}
	return total, true
}

// group counts a date line: its date, then its suffix.
func (x *tokenCtx) group(day, suffix string) int {
	if x.contentOnly {
		return 0
	}
	if k, ok := x.day(day); ok {
		if n, ok := x.t.consts[suffix]; ok {
			return k + n
		}
	}
	return x.count(day + suffix)
}

// today counts the today line, "today: 2026-01-05\n".
func (x *tokenCtx) today(day string) int {
	if x.contentOnly {
		return 0
	}
	if k, ok := x.day(day); ok {
		return x.str(todayHead) + x.str(" ") + k + x.str("\n")
	}
	return x.cnt.Count(todayHead + " " + day + "\n")
}

// partOf returns the table holding note doc's counts and its number
// there.
func (t *tokTable) partOf(doc int) (*tokTable, int) {
	if t.parts == nil {
		return t, doc
	}
	k := sort.Search(len(t.parts), func(k int) bool { return t.start[k+1] > doc })
	return t.parts[k], doc - t.start[k]
}

// lineOf returns the tokens of note doc's compact line (0: unknown).
func (t *tokTable) lineOf(doc int) uint16 {
	p, i := t.partOf(doc)
	return p.line[i]
}

// line returns the tokens of note doc's compact line.
func (x *tokenCtx) line(doc int, line string) int {
	if x.t != nil {
		if k := x.t.lineOf(doc); k > 0 {
			return int(k)
		}
	}
	return x.cnt.Count(line)
}

// footer returns the tokens of footer(left): pieces that start at
// pre-tokeniser boundaries, so they add up.
func (x *tokenCtx) footer(left []LeftOut) int {
	if x.contentOnly {
		return 0
	}
	if x.t == nil {
		return x.cnt.Count(footer(left))
	}
	list := left[:min(len(left), maxListed)]
	n := x.str(footHead)
	for k, l := range list {
		t, i := x.t.partOf(l.doc)
		r := int(t.ref[i])
		if r == 0 {
			return x.cnt.Count(footer(left))
		}
		n += r
		if k > 0 && list[k-1].Reason == l.Reason {
			n += x.str(",")
		}
		if k == len(list)-1 || list[k+1].Reason != l.Reason {
			n += x.str(footTail(l.Reason, tailEnd(k == len(list)-1, len(left) > len(list))))
		}
	}
	if more := len(left) - len(list); more > 0 {
		k, ok := x.digitRun(itoa(more))
		if !ok {
			return x.cnt.Count(footer(left))
		}
		n += x.str(footMoreHead) + k + x.str(footMoreTail)
	}
	return n
}
