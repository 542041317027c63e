package inject

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// An answer-type step after scoring. Some questions say what sort of
// answer they want and rarely its words: "What books has John read?"
// wants a title, "Which places has Tim been to?" a place. A note gives a
// title in quotes ("John reread 'The Alchemist'") and a place as a name
// after a preposition ("a trip to Spain", "in the Pacific Northwest").
// When the task asks for one of them, the best-scored notes that give one
// gain a share of the best score (RankParams.AnswerTypes): enough to
// order notes that match the task alike, not to pass a better match.

// answerType is a sort of answer a task may ask for.
type answerType int

const (
	answerTitle answerType = 1 << iota // a titled work
	answerPlace                        // a place
)

// answerWords are the words that ask for each sort of answer.
var answerWords = map[string]answerType{
	"book": answerTitle, "books": answerTitle, "novel": answerTitle, "novels": answerTitle,
	"story": answerTitle, "stories": answerTitle, "movie": answerTitle, "movies": answerTitle,
	"film": answerTitle, "films": answerTitle, "show": answerTitle, "shows": answerTitle,
	"series": answerTitle, "song": answerTitle, "songs": answerTitle, "album": answerTitle,
	"albums": answerTitle, "game": answerTitle, "games": answerTitle, "podcast": answerTitle,
	"podcasts": answerTitle, "title": answerTitle, "titles": answerTitle, "author": answerTitle,
	"authors": answerTitle,

	"where": answerPlace, "place": answerPlace, "places": answerPlace, "country": answerPlace,
	"countries": answerPlace, "city": answerPlace, "cities": answerPlace, "state": answerPlace,
	"states": answerPlace, "location": answerPlace, "locations": answerPlace,
	"destination": answerPlace, "destinations": answerPlace, "travel": answerPlace,
	"traveled": answerPlace, "travelled": answerPlace, "visit": answerPlace,
	"visited": answerPlace, "trip": answerPlace, "trips": answerPlace,
}

// placeWords are the words after which a capitalised name is a place.
var placeWords = map[string]bool{
	"in": true, "to": true, "from": true, "near": true, "around": true, "across": true,
	"visited": true, "explored": true,
}

// titleSpan is the longest quoted title looked for, in bytes.
const titleSpan = 80

// asksFor returns the sorts of answer a task asks for.
func asksFor(task string) answerType {
	var t answerType
	for _, w := range strings.FieldsFunc(task, func(r rune) bool { return !unicode.IsLetter(r) }) {
		t |= answerWords[strings.ToLower(w)]
	}
	return t
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
		if strings.ContainsRune(s[i:min(len(s), i+titleSpan)], closing) {
			return true
		}
	}
	return false
}

// namesPlace reports whether s names a place: one of placeWords, then
// (past a "the") a word with a capital letter that is not the name of a
// topic (a person the memory files notes under: "talked to Melanie").
func (c *Corpus) namesPlace(s string) bool {
	ws := strings.Fields(s)
	for i := 1; i+1 < len(ws); i++ {
		if !placeWords[strings.ToLower(ws[i])] {
			continue
		}
		name := ws[i+1]
		if strings.EqualFold(name, "the") && i+2 < len(ws) {
			name = ws[i+2]
		}
		if first, _ := utf8.DecodeRuneInString(name); !unicode.IsUpper(first) || utf8.RuneCountInString(name) < 2 {
			continue
		}
		name = strings.TrimSuffix(strings.TrimSuffix(name, "'s"), "’s")
		name = strings.ToLower(strings.TrimRightFunc(name, func(r rune) bool { return !unicode.IsLetter(r) }))
		if c.namesTopic(name) {
			continue
		}
		return true
	}
	return false
}

// namesTopic reports whether name is a topic's slug or begins exactly one
// (a short form of it).
func (c *Corpus) namesTopic(name string) bool {
	i := sort.Search(len(c.Topics), func(i int) bool { return c.Topics[i].Slug >= name })
	if i < len(c.Topics) && c.Topics[i].Slug == name {
		return true
	}
	_, ok := c.topicStartingWith(name)
	return ok
}

// boostAnswerTypes raises, when the task asks for a title or a place, the
// best proximityDocs notes that give one by share of the best score (once
// for a note that gives both sorts the task asks for).
func (c *Corpus) boostAnswerTypes(task string, share float64, scores []float64, eligible []bool) {
	want := asksFor(task)
	if want == 0 {
		return
	}
	top := topHits(scores, eligible, proximityDocs)
	if len(top) == 0 {
		return
	}
	w := share * top[0].Score
	for _, h := range top {
		text := c.Note(h.Doc).Content
		if want&answerTitle != 0 && quotesTitle(text) || want&answerPlace != 0 && c.namesPlace(text) {
			scores[h.Doc] += w
		}
	}
}
