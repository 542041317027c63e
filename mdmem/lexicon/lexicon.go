// Package lexicon holds the everyday English knowledge memctl's text
// comparisons share: words people write for one another ("mum" and
// "mother", "kids" and "children"), and the forms of irregular verbs
// ("go", "went", "gone"). Retrieval (inject) uses it to match a
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

// verbs are English verbs whose past forms are not made with -ed (base
// form, past, past participle), which a stemmer cannot bring back to the
// base form: "What did Mel make?" asks about a note saying "Mel made".
// Verbs left out: those whose forms are one word or a stop word (put,
// get, win), and those a form of which is also a common other word
// (leave and left, lie and lay, bear and born, fall the season, wind and
// wound, rose, lead the metal, ring, show, spring, mean, …).
var verbs = [][]string{
	{"arise", "arose", "arisen"}, {"awake", "awoke", "awoken"}, {"become", "became"},
	{"begin", "began", "begun"}, {"bend", "bent"}, {"bleed", "bled"},
	{"blow", "blew", "blown"}, {"breed", "bred"}, {"bring", "brought"}, {"build", "built"},
	{"burn", "burnt"}, {"buy", "bought"}, {"catch", "caught"},
	{"choose", "chose", "chosen"}, {"cling", "clung"}, {"come", "came"}, {"creep", "crept"},
	{"deal", "dealt"}, {"dig", "dug"}, {"draw", "drew", "drawn"}, {"dream", "dreamt"},
	{"drink", "drank", "drunk"}, {"drive", "drove", "driven"}, {"eat", "ate", "eaten"},
	{"feed", "fed"}, {"feel", "felt"}, {"fight", "fought"}, {"find", "found"},
	{"flee", "fled"}, {"fly", "flew", "flown"}, {"forbid", "forbade", "forbidden"},
	{"forget", "forgot", "forgotten"}, {"forgive", "forgave", "forgiven"},
	{"freeze", "froze", "frozen"}, {"give", "gave", "given"}, {"go", "went", "gone"},
	{"grow", "grew", "grown"}, {"hang", "hung"}, {"hear", "heard"},
	{"hide", "hid", "hidden"}, {"hold", "held"}, {"keep", "kept"}, {"kneel", "knelt"},
	{"know", "knew", "known"}, {"leap", "leapt"}, {"learn", "learnt"}, {"lend", "lent"},
	{"lose", "lost"}, {"make", "made"}, {"meet", "met"}, {"overcome", "overcame"},
	{"pay", "paid"}, {"ride", "rode", "ridden"}, {"run", "ran"}, {"say", "said"},
	{"see", "saw", "seen"}, {"seek", "sought"}, {"sell", "sold"}, {"send", "sent"},
	{"sew", "sewn"}, {"shake", "shook", "shaken"}, {"shine", "shone"}, {"shoot", "shot"},
	{"shrink", "shrank", "shrunk"}, {"sing", "sang", "sung"}, {"sit", "sat"},
	{"sleep", "slept"}, {"slide", "slid"}, {"speak", "spoke", "spoken"}, {"spend", "spent"},
	{"spin", "spun"}, {"stand", "stood"}, {"steal", "stole", "stolen"},
	{"strike", "struck"}, {"swear", "swore", "sworn"}, {"sweep", "swept"},
	{"swim", "swam", "swum"}, {"take", "took", "taken"}, {"teach", "taught"},
	{"tell", "told"}, {"think", "thought"}, {"throw", "threw", "thrown"},
	{"understand", "understood"}, {"undertake", "undertook", "undertaken"},
	{"wake", "woke", "woken"}, {"wear", "wore", "worn"}, {"weave", "wove", "woven"},
	{"weep", "wept"}, {"withdraw", "withdrew", "withdrawn"}, {"write", "wrote", "written"},
}

var (
	others    = map[string][]string{}
	canonical = map[string]string{}
	forms     = map[string][]string{}
)

func init() {
	for _, v := range verbs {
		for _, w := range v {
			for _, o := range v {
				if o != w {
					forms[w] = append(forms[w], o)
				}
			}
		}
	}
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

// Forms returns the other forms of a lower-case word that is a form of an
// irregular verb ("went": "go", "gone"), nil when it is none. The caller
// must not modify the slice.
func Forms(word string) []string { return forms[word] }
