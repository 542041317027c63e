package consolidate

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	"github.com/memctl/memctl/consolidate/transcript"
	"github.com/memctl/memctl/mdmem/redact"
)

// minPersonSupport is the share of a user_explicit candidate's content
// words that the person's typed turns must hold.
const minPersonSupport = 0.6

// turnIndex is what extract knows of the turns it sent: which numbers
// exist, and what the person typed in each.
type turnIndex struct {
	valid  map[int]bool
	person map[int]string // turn → the person's words in it (lower case, normalised)
}

// newTurnIndex indexes turns.
func newTurnIndex(turns []transcript.Turn) *turnIndex {
	ti := &turnIndex{valid: map[int]bool{}, person: map[int]string{}}
	for _, t := range turns {
		ti.valid[t.N] = true
		if t.Person && t.Kind == transcript.KindText && !t.Sidechain {
			ti.person[t.N] += " " + foldText(t.Text)
		}
	}
	return ti
}

// foldText is text as the support check compares it: normalised (NFKC,
// hidden characters gone, confusable letters folded) and lower case.
func foldText(s string) string { return strings.ToLower(redact.Fold(s)) }

// supportStopwords are words a restatement adds or drops freely.
var supportStopwords = map[string]bool{
	"a": true, "an": true, "the": true, "to": true, "of": true, "in": true, "on": true, "for": true, "and": true,
	"or": true, "is": true, "are": true, "be": true, "by": true, "with": true, "at": true, "as": true, "it": true,
	"its": true, "that": true, "this": true, "these": true, "those": true, "user": true, "users": true,
	"person": true, "their": true, "they": true, "them": true, "we": true, "our": true, "us": true, "i": true,
	"my": true, "me": true, "you": true, "your": true, "was": true, "were": true, "has": true, "have": true,
	"should": true, "wants": true, "want": true, "likes": true, "s": true, "t": true, "from": true, "so": true,
}

// negations are the words that turn a statement around; a restatement
// may word a negation differently, but may not add one the person did not
// say ("production needs a review" is not "production never needs one").
var negations = map[string]bool{"not": true, "never": true, "no": true, "none": true, "nothing": true,
	"nobody": true, "without": true, "cannot": true, "dont": true, "doesnt": true, "don": true, "doesn": true,
	"won": true, "mustn": true, "shouldn": true, "isn": true, "aren": true, "skip": true, "avoid": true}

// supportWords splits folded text into words: letters and digits.
func supportWords(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}

// stem is a word's first five letters: "prefers" and "preferred" meet.
func stem(w string) string {
	if r := []rune(w); len(r) > 5 {
		return string(r[:5])
	}
	return w
}

// unsupported says why the person's typed turns do not back content ("" when
// they do): the turns cited (together) or, when the model cited none of the
// person's, one turn the person typed in this part must hold most of its
// words, every number in it, and a negation when it states one; and the
// sentence of theirs that holds most of its words may not state a negation
// it drops ("Never include the token in commit messages" does not back
// "Always include the token in every commit message"). Words are not
// gathered from several uncited turns: a page could be assembled from them.
func (ti *turnIndex) unsupported(content string, cited []int) string {
	var pooled string
	for _, n := range cited {
		pooled += ti.person[n]
	}
	texts := []string{pooled}
	if pooled == "" {
		texts = texts[:0]
		var ns []int
		for n := range ti.person {
			ns = append(ns, n)
		}
		sort.Ints(ns)
		for _, n := range ns {
			texts = append(texts, ti.person[n])
		}
	}
	best, bestFound := "no turn the person typed says it", -1
	for _, text := range texts {
		if strings.TrimSpace(text) == "" {
			continue
		}
		why, found := supportedBy(content, text)
		if why == "" {
			return ""
		}
		if found > bestFound {
			best, bestFound = why, found
		}
	}
	return best
}

// supportedBy is unsupported for one text of the person's: why it does
// not back content ("" when it does), and how many of content's words it
// holds.
func supportedBy(content, text string) (string, int) {
	have := map[string]bool{}
	neg := false
	for _, w := range supportWords(text) {
		have[stem(w)] = true
		neg = neg || negations[w]
	}
	if strings.Contains(text, "n't") {
		neg = true
	}
	var words, found int
	var stems []string
	stated := false
	for _, w := range supportWords(foldText(content)) {
		switch {
		case negations[w]:
			stated = true
			if !neg {
				return "it states a negation the person did not", found
			}
		case strings.IndexFunc(w, unicode.IsDigit) >= 0:
			if !have[stem(w)] {
				return "a number in it is not in the person's words", found
			}
		case supportStopwords[w]:
			continue
		}
		words++
		stems = append(stems, stem(w))
		if have[stem(w)] {
			found++
		}
	}
	if words == 0 || float64(found) < minPersonSupport*float64(words) {
		return fmt.Sprintf("the person's typed turns hold %d of its %d words", found, words), found
	}
	if !stated && negatedSentence(text, stems) {
		return "it drops the negation of the person's sentence", found
	}
	return "", found
}

// negatedSentence reports whether the sentence of text that holds most of
// stems states a negation.
func negatedSentence(text string, stems []string) bool {
	best, neg := 0, false
	for _, sent := range strings.FieldsFunc(text, func(r rune) bool { return strings.ContainsRune(".!?;\n", r) }) {
		have := map[string]bool{}
		n := false
		for _, w := range supportWords(sent) {
			have[stem(w)] = true
			n = n || negations[w]
		}
		n = n || strings.Contains(sent, "n't")
		hits := 0
		for _, s := range stems {
			if have[s] {
				hits++
			}
		}
		if hits > best {
			best, neg = hits, n
		}
	}
	return neg
}
