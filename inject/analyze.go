package inject

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Analyzer turns text into index terms.
type Analyzer struct {
	Stem      bool // apply the Porter stemmer to English words
	StopWords bool // drop English stop words
}

// Terms appends the terms of text to dst. Words are runs of letters and
// digits, lower-cased; apostrophes split ("Caroline's" → "caroline", "s").
// Runs of CJK characters (Han, Hiragana, Katakana, Hangul) become
// overlapping character bigrams (a single character stays a unigram), the
// usual way to index text without spaces.
func (a Analyzer) Terms(dst []string, text string) []string { return a.scan(dst, text, false) }

// words appends the words of text before stop words and stemming: what
// Terms appends is term of each of them, where not "".
func (a Analyzer) words(dst []string, text string) []string { return a.scan(dst, text, true) }

// term is the term of one word of words: CJK n-grams as they are, other
// words stemmed, "" for a stop word.
func (a Analyzer) term(w string) string {
	if r, _ := utf8.DecodeRuneInString(w); isCJK(r) {
		return w
	}
	if a.StopWords && stopWords[w] {
		return ""
	}
	if a.Stem {
		return cachedStem(w)
	}
	return w
}

func (a Analyzer) scan(dst []string, text string, raw bool) []string {
	i := 0
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case isCJK(r):
			j := i
			var prev string
			count := 0
			for j < len(text) {
				r2, n2 := utf8.DecodeRuneInString(text[j:])
				if !isCJK(r2) {
					break
				}
				cur := text[j : j+n2]
				if prev != "" {
					dst = append(dst, prev+cur)
				}
				prev = cur
				count++
				j += n2
			}
			if count == 1 {
				dst = append(dst, prev)
			}
			i = j
		case isWordRune(r):
			j := i
			ascii := true
			for j < len(text) {
				r2, n2 := utf8.DecodeRuneInString(text[j:])
				if !isWordRune(r2) || isCJK(r2) {
					break
				}
				if r2 >= utf8.RuneSelf || 'A' <= r2 && r2 <= 'Z' {
					ascii = false
				}
				j += n2
			}
			w := text[i:j]
			if !ascii {
				w = strings.ToLower(w)
			}
			i = j
			if raw {
				dst = append(dst, w)
				continue
			}
			if a.StopWords && stopWords[w] {
				continue
			}
			if a.Stem {
				w = cachedStem(w)
			}
			dst = append(dst, w)
		default:
			i += n
		}
	}
	return dst
}

// stemCache memoises Stem: a memory has far fewer distinct words than
// words, and stemming is the bulk of indexing.
var (
	stemMu    sync.Mutex
	stemCache = map[string]string{}
)

func cachedStem(w string) string {
	if !stemmable(w) { // most distinct words of a large memory: numbers and ids
		return w
	}
	stemMu.Lock()
	defer stemMu.Unlock()
	if s, ok := stemCache[w]; ok {
		return s
	}
	s := Stem(w)
	if len(stemCache) < 1<<18 {
		stemCache[strings.Clone(w)] = s
	}
	return s
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

func isCJK(r rune) bool {
	if r < 0x2E80 {
		return false
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

// stopWords is a common English stop list (function words, question words,
// auxiliaries). Content words are never on it.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all am an and any are aren as at
be because been before being below between both but by can cannot could couldn
d did didn do does doesn doing don down during each few for from further had hadn has hasn
have haven having he her here hers herself him himself his how i if in into is isn it its
itself just ll m me more most mustn my myself no nor not now o of off on once only or other
our ours ourselves out over own re s same shan she should shouldn so some such t than that
the their theirs them themselves then there these they this those through to too under until
up ve very was wasn we were weren what when where which while who whom why will with won
would wouldn y you your yours yourself yourselves also ever may might must shall us get got
let yet via per`) {
		m[w] = true
	}
	return m
}()

// classifier matches "kind of", "type of", "sort of" (and plurals): in a
// task ("What kind of music does Mel like?", "which type of index") they
// say what sort of answer is wanted, not what it is about, and a note
// holding "kind" or "type" is no nearer to it.
var classifier = regexp.MustCompile(`(?i)\b(?:kinds?|types?|sorts?)\s+of\b`)

// withoutClassifiers is the task without its classifier phrases.
func withoutClassifiers(task string) string {
	return classifier.ReplaceAllLiteralString(task, " ")
}
