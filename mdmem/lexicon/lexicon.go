// Package lexicon holds the everyday English knowledge memctl's text
// comparisons share: words people write for one another ("mum" and
// "mother", "kids" and "children"). Retrieval (inject) uses it to match a
// question's words to a memory's, consolidation to see that two notes
// name the same thing.
package lexicon

// groups are sets of everyday English words that name the same thing, as
// people write them in a question and in a note. They are general
// vocabulary, kept short: a word belongs only where any reader would take
// it for the others, whatever the sentence ("fall" is not "autumn" in
// "prices fall"). The first word of a group is its canonical form.
var groups = [][]string{
	{"child", "kid"},
	{"children", "kids"},
	{"mother", "mom", "mum", "mommy", "mummy"},
	{"father", "dad", "daddy"},
	{"grandmother", "grandma", "granny"},
	{"grandfather", "grandpa", "granddad", "grandad"},
	{"husband", "hubby"},
	{"puppy", "pup"},
	{"kitten", "kitty"},
	{"photo", "photograph", "picture", "pic"},
	{"bicycle", "bike"},
	{"car", "automobile"},
	{"doctor", "physician"},
	{"movie", "film"},
	{"television", "tv"},
	{"telephone", "phone", "cellphone"},
	{"birthday", "bday"},
}

var (
	others    = map[string][]string{}
	canonical = map[string]string{}
)

func init() {
	for _, g := range groups {
		for _, w := range g {
			canonical[w] = g[0]
			for _, o := range g {
				if o != w {
					others[w] = append(others[w], o)
				}
			}
		}
	}
}

// Synonyms returns the other words of a lower-case word's group, nil when
// it has none. The caller must not modify the slice.
func Synonyms(word string) []string { return others[word] }

// Canonical returns the canonical form of a lower-case word: the first
// word of its group, or the word itself.
func Canonical(word string) string {
	if c, ok := canonical[word]; ok {
		return c
	}
	return word
}
