package inject

import (
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memctl/memctl/mdmem/lexicon"
)

// A step before scoring: the task's words matched to the memory's own
// vocabulary (docs/INJECT.md, "Ranking"). A question is written in the
// asker's words and a note in the writer's; where the two differ only in
// form, the index already holds the term that was meant:
//
//   - a word in other everyday words of the same meaning (mdmem/lexicon:
//     "kids" and "children", "grandma" and "grandmother");
//   - another form of an irregular verb ("make" and "made", "go" and
//     "went"), which the stemmer cannot bring together;
//   - a thing of the kind the word asks for (mdmem/lexicon: "sports" and
//     "tennis", "countries" and "spain"), at a quarter of a word's weight
//     (kindWeight): the note names one thing of the kind, which may not
//     be the one meant;
//   - a compound written as one word or two ("roadtrip", "road trip");
//   - a short form of a name the memory files a topic under ("Mel" for
//     the topic "melanie").
//
// Other added terms carry half the weight of the word they stand for when
// that word is in the index too, its full weight when it is not (then they
// are the only reading of the word the memory can match).

// kindWeight is the weight of a thing of the kind a task's word asks for.
const kindWeight = 0.25

// Lengths for the compound and name steps: shorter pieces match too much.
const (
	minPiece    = 3 // each part of a compound, and a name's short form
	minCompound = 6 // a one-word compound split in two
)

// vocabTerms returns the terms of the index that stand for words of the
// task the index holds in another form, with their weights (see above).
// held are the task's own terms the index holds.
func (c *Corpus) vocabTerms(ix *Index, task string, held map[string]bool) map[string]float64 {
	out := map[string]float64{}
	add := func(word string, w float64) {
		t := ix.An.term(word)
		if t == "" || held[t] {
			return
		}
		if _, ok := ix.lookup(t); ok && out[t] < w {
			out[t] = w
		}
	}
	weight := func(t string) float64 {
		if held[t] {
			return 0.5
		}
		return 1
	}
	words := ix.An.words(nil, task)
	for i, w := range words {
		t := ix.An.term(w)
		for _, o := range lexicon.Synonyms(w) {
			add(o, weight(t))
		}
		for _, o := range lexicon.Forms(w) { // "make" → "made"
			add(o, weight(t))
		}
		for _, o := range lexicon.Members(w) { // "sports" → "tennis"
			add(o, kindWeight)
		}
		if i+1 < len(words) && t != "" && ix.An.term(words[i+1]) != "" {
			add(w+words[i+1], 0.5) // "road trip" → "roadtrip"
		}
		if t == "" || held[t] || len(w) < minCompound {
			continue
		}
		if a, b, ok := ix.split(w); ok { // "roadtrip" → "road", "trip"
			add(a, 0.5)
			add(b, 0.5)
		}
	}
	for _, name := range taskNames(task) {
		if t := ix.An.term(name); t == "" || held[t] || utf8.RuneCountInString(name) < minPiece {
			continue
		}
		if slug, ok := c.topicStartingWith(name); ok {
			add(slug, 1)
		}
	}
	return out
}

// split cuts a word the index does not hold into two words it holds,
// neither a stop word nor shorter than minPiece, the cut nearest the
// middle; ok is false when there is none.
func (ix *Index) split(w string) (a, b string, ok bool) {
	best := -1
	for i := minPiece; i <= len(w)-minPiece; i++ {
		if !utf8.RuneStart(w[i]) {
			continue
		}
		ta, tb := ix.An.term(w[:i]), ix.An.term(w[i:])
		if ta == "" || tb == "" {
			continue
		}
		if _, okA := ix.lookup(ta); !okA {
			continue
		}
		if _, okB := ix.lookup(tb); !okB {
			continue
		}
		if m := min(i, len(w)-i); m > best {
			best, a, b = m, w[:i], w[i:]
		}
	}
	return a, b, best >= 0
}

// topicStartingWith returns the one topic slug that begins with name
// (case-folded) and is longer, when exactly one does.
func (c *Corpus) topicStartingWith(name string) (string, bool) {
	name = strings.ToLower(name)
	i := sort.Search(len(c.Topics), func(i int) bool { return c.Topics[i].Slug >= name })
	found := ""
	for ; i < len(c.Topics) && strings.HasPrefix(c.Topics[i].Slug, name); i++ {
		s := c.Topics[i].Slug
		if s == name || strings.ContainsAny(s, "-_/") {
			continue // the name itself, or a slug of several words
		}
		if found != "" {
			return "", false
		}
		found = s
	}
	return found, found != ""
}

// taskNames returns the words of a task written with a capital letter
// that do not begin a sentence (where any word is capitalised): names.
func taskNames(task string) []string {
	var out []string
	start := true
	for i := 0; i < len(task); {
		r, n := utf8.DecodeRuneInString(task[i:])
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			switch r {
			case '.', '?', '!', ':', ';', '\n', '"', '(', '[', '-', '*', '#', '>':
				start = true
			}
			i += n
			continue
		}
		j := i
		for j < len(task) {
			r2, n2 := utf8.DecodeRuneInString(task[j:])
			if !unicode.IsLetter(r2) && !unicode.IsDigit(r2) {
				break
			}
			j += n2
		}
		if unicode.IsUpper(r) && !start {
			out = append(out, task[i:j])
		}
		start = false
		i = j
	}
	return out
}

// withVocab adds vocabTerms to a query, keeping it sorted by text.
func (c *Corpus) withVocab(ix *Index, task string, q []qterm) []qterm {
	held := make(map[string]bool, len(q))
	for _, t := range q {
		held[t.text] = true
	}
	extra := c.vocabTerms(ix, task, held)
	if len(extra) == 0 {
		return q
	}
	for t, w := range extra {
		id, _ := ix.lookup(t)
		q = append(q, qterm{text: t, id: id, w: w})
	}
	sort.Slice(q, func(i, j int) bool { return q[i].text < q[j].text })
	return q
}
