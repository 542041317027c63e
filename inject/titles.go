package inject

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// An answer-type step after scoring: a task that asks for a titled work
// ("What books has John read?", "Which movies did they see?") wants notes
// that name one, and a note names a title in quotes ("John reread 'The
// Alchemist'"). The words of the question rarely say which title, so
// the best-scored notes that quote one gain a share of the best score.

// titleWords are the words that ask for a titled work.
var titleWords = map[string]bool{
	"book": true, "books": true, "novel": true, "novels": true, "story": true, "stories": true,
	"movie": true, "movies": true, "film": true, "films": true, "show": true, "shows": true,
	"series": true, "song": true, "songs": true, "album": true, "albums": true,
	"game": true, "games": true, "podcast": true, "podcasts": true,
	"title": true, "titles": true, "author": true, "authors": true,
}

// titleSpan is the longest quoted title looked for, in bytes.
const titleSpan = 80

// asksForTitle reports whether a task has a word that asks for a titled
// work.
func asksForTitle(task string) bool {
	for _, w := range strings.FieldsFunc(task, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if titleWords[strings.ToLower(w)] {
			return true
		}
	}
	return false
}

// quotesTitle reports whether s quotes a title: an opening quote (', ",
// ‘ or “) not inside a word, a capital letter, and the closing quote
// within titleSpan bytes.
func quotesTitle(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		var closing rune
		switch r {
		case '\'', '"':
			closing = r
		case '‘':
			closing = '’'
		case '“':
			closing = '”'
		default:
			continue
		}
		if before, _ := utf8.DecodeLastRuneInString(s[:i-n]); i-n > 0 && (unicode.IsLetter(before) || unicode.IsDigit(before)) {
			continue // an apostrophe: "Nate's", "kids'"
		}
		if first, _ := utf8.DecodeRuneInString(s[i:]); !unicode.IsUpper(first) {
			continue
		}
		rest := s[i:min(len(s), i+titleSpan)]
		if strings.ContainsRune(rest, closing) {
			return true
		}
	}
	return false
}

// boostTitles raises, when the task asks for a titled work, the best
// proximityDocs notes that quote a title by share of the best score.
func (c *Corpus) boostTitles(task string, share float64, scores []float64, eligible []bool) {
	if !asksForTitle(task) {
		return
	}
	top := topHits(scores, eligible, proximityDocs)
	if len(top) == 0 {
		return
	}
	w := share * top[0].Score
	for _, h := range top {
		if quotesTitle(c.Note(h.Doc).Content) {
			scores[h.Doc] += w
		}
	}
}
