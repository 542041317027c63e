package consolidate

import (
	"fmt"
	"hash/fnv"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memctl/memctl/mdmem"
	"github.com/memctl/memctl/mdmem/lexicon"
)

// tokens splits text into lower-case tokens. Word tokens are runs of
// letters and digits, keeping '.', ',' and ':' between two digits ("3.11",
// "10:30"), '-', '_', '/' inside a word ("order-service"), a leading '-'
// ("-5", "--force") and '+' or '#' right after a letter ("c++", "c#").
// Symbols that carry meaning are tokens of their own, so that texts that
// differ in them never compare equal: a run of comparison or other math
// operators (">=", "!=", "+", "≥" read as ">="), a currency sign ("$",
// "€"), '%', '#', and a lone '-'. Other punctuation separates tokens and
// is dropped, as a run of '!' is. A word with everyday synonyms is their
// canonical form (mdmem/lexicon: "mum" is "mother", "kids" "children").
func tokens(s string) []string { return tokenize(s, true) }

// casedTokens are tokens with their letters' case kept: the same tokens,
// at the same places.
func casedTokens(s string) []string { return tokenize(s, false) }

// caseChange returns a unit two texts spell in another case ("100 MB" /
// "100 Mb", "512 kB" / "512 KB", "5G" / "5g"), as each spells it: the
// case of a short word right after a number says which unit it is, so the
// texts are not one statement. Other case changes are emphasis or the
// start of a sentence ("NO" / "no"), no change.
func caseChange(a, b string) (was, now string, ok bool) {
	ua := unitSpellings(a)
	for _, m := range unitRE.FindAllStringSubmatch(b, -1) {
		key := m[1] + " " + strings.ToLower(m[2])
		for _, u := range ua[key] {
			if u != m[2] {
				return u, m[2], true
			}
		}
	}
	return "", "", false
}

// unitRE matches a number and the short word right after it: a unit.
var unitRE = regexp.MustCompile(`(\d+(?:[.,]\d+)*) ?([A-Za-z]{1,4})\b`)

// unitSpellings maps "number unit" (the unit lower-cased) to how a text
// spells the unit.
func unitSpellings(s string) map[string][]string {
	m := map[string][]string{}
	for _, u := range unitRE.FindAllStringSubmatch(s, -1) {
		key := u[1] + " " + strings.ToLower(u[2])
		m[key] = append(m[key], u[2])
	}
	return m
}

// tokenize is tokens, with the letters lower-cased or not.
func tokenize(s string, lower bool) []string {
	var out []string
	var b strings.Builder
	var last rune // the last rune written to b
	flush := func() {
		if b.Len() > 0 {
			w := b.String()
			if lower {
				w = lexicon.Canonical(w) // "mum" and "mother" are one word
			}
			out = append(out, w)
			b.Reset()
		}
	}
	word := func(r rune) {
		if lower {
			b.WriteRune(unicode.ToLower(r))
		} else {
			b.WriteRune(r)
		}
		last = r
	}
	rs := []rune(s)
	at := func(i int) rune {
		if i < 0 || i >= len(rs) {
			return 0
		}
		return rs[i]
	}
	for i := 0; i < len(rs); i++ {
		r, prev, next := rs[i], at(i-1), at(i+1)
		switch {
		case isWordRune(r):
			word(r)
		case (r == '.' || r == ',' || r == ':') && unicode.IsDigit(prev) && unicode.IsDigit(next):
			word(r)
		case (r == '-' || r == '_' || r == '/') && b.Len() > 0 && isWordRune(next):
			word(r)
		case r == '-' && b.Len() == 0 && (isWordRune(next) || next == '-' && isWordRune(at(i+2))):
			word(r)
		case (r == '+' || r == '#') && b.Len() > 0 && (unicode.IsLetter(last) || last == '+' || last == '#'):
			word(r)
		case r == '-':
			flush()
			for at(i+1) == '-' {
				i++
			}
			out = append(out, "-")
		case isOperator(r):
			flush()
			var op strings.Builder
			for ; i < len(rs) && isOperator(rs[i]); i++ {
				op.WriteString(operatorText(rs[i]))
			}
			i--
			if t := op.String(); strings.Trim(t, "!") != "" {
				out = append(out, t)
			}
		case unicode.Is(unicode.Sc, r) || r == '%' || r == '‰' || r == '#':
			flush()
			out = append(out, string(r))
		default:
			flush()
		}
	}
	flush()
	return out
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// isOperator reports whether r belongs to an operator token: '!' (as in
// "!=") and the math symbols ('+', '<', '=', '>', '|', '~', '±', '≥', …).
func isOperator(r rune) bool { return r == '!' || unicode.Is(unicode.Sm, r) }

// operatorText spells the one-rune comparison operators as their ASCII
// pairs, so "≥ 3" and ">= 3" are equal.
func operatorText(r rune) string {
	switch r {
	case '≥':
		return ">="
	case '≤':
		return "<="
	case '≠':
		return "!="
	case '−':
		return "-"
	}
	return string(r)
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			return true
		}
	}
	return false
}

// shingles returns the hashed word unigrams and bigrams of toks, a set.
func shingles(toks []string) []uint64 {
	seen := make(map[uint64]struct{}, 2*len(toks))
	out := make([]uint64, 0, 2*len(toks))
	add := func(s string) {
		h := fnv.New64a()
		h.Write([]byte(s))
		v := h.Sum64()
		if _, ok := seen[v]; !ok {
			seen[v] = struct{}{}
			out = append(out, v)
		}
	}
	for i, t := range toks {
		add(t)
		if i+1 < len(toks) {
			add(t + "\x00" + toks[i+1])
		}
	}
	return out
}

// unigrams returns the unigram shingles (as shingles hashes them) of the
// content words of toks: no fillers, no lone symbols, each once.
func unigrams(toks []string) []uint64 {
	var out []uint64
	seen := map[uint64]bool{}
	for _, t := range toks {
		if !isContentWord(t) {
			continue
		}
		h := fnv.New64a()
		h.Write([]byte(t))
		if v := h.Sum64(); !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// facts returns the names, numbers and dates of a text that a rewrite must
// not invent: every token with a digit, every capitalised word, and words
// with inner capitals ("PostgreSQL", "iPhone"). A capitalised word that
// starts a sentence is a fact too unless it is a common sentence opener
// ("The", "Always", "Uses"; see sentenceOpeners): "Alice prefers tabs"
// states a name, "The team prefers tabs" does not. Returned lower-case.
func facts(s string) []string {
	var out []string
	sentenceStart := true
	for _, w := range strings.Fields(s) {
		core := strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if core != "" {
			first, _ := utf8.DecodeRuneInString(core)
			innerCap := false
			for i, r := range core {
				if i > 0 && unicode.IsUpper(r) {
					innerCap = true
					break
				}
			}
			switch {
			case hasDigit(core), innerCap:
				out = append(out, wordTokens(w)...)
			case unicode.IsUpper(first):
				if !sentenceStart || !sentenceOpeners[strings.ToLower(core)] {
					out = append(out, wordTokens(w)...)
				}
			}
		}
		last, _ := utf8.DecodeLastRuneInString(w)
		sentenceStart = last == '.' || last == '!' || last == '?' || last == ':' || last == ';'
	}
	return out
}

// wordTokens returns the tokens of w that hold a letter or digit, with
// their symbols ("c++", "-5"), but not the symbols of their own ("$").
func wordTokens(w string) []string {
	var out []string
	for _, t := range tokens(w) {
		if strings.IndexFunc(t, isWordRune) >= 0 {
			out = append(out, t)
		}
	}
	return out
}

// sentenceOpeners are common words that start a sentence of a memory
// statement with a capital without naming anything: function words,
// pronouns, adverbs, auxiliaries and the verbs memory statements open
// with. A capitalised first word not on this list (and not in the
// sources) is treated as a name the model may have invented.
var sentenceOpeners = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the this that these those there here it its they them their
we our us you your he she his her i my me one some any all each every both either neither no none
nothing everything something anything many much more most few several other another such
and but or nor so yet if when whenever while where wherever whether because since although though
unless until after before once as than then thus hence therefore however also still instead
otherwise meanwhile now today currently recently previously formerly already soon later often
usually sometimes rarely always never not only just even again too very quite rather mostly
mainly generally typically normally overall finally first second third next last new old
in on at by for from to of with without within into onto over under about above below between
among across through during per via like unlike despite against toward towards upon
is are was were be been being am do does did done has have had having will would shall should
can could may might must need needs needed
use uses used using prefer prefers preferred avoid avoids avoided keep keeps kept run runs
make makes made add adds added set sets put puts get gets got let lets move moves moved
switch switched migrate migrated replace replaced store stores stored send sends sent
write writes written read reads ask asks asked check checks test tests deploy deploys
deployed deployment deployments build builds release releases pin pins pinned
user users team teams project projects service services code example examples
please note see remember consider ensure make don't doesn't didn't isn't aren't wasn't weren't
can't cannot won't shouldn't wouldn't couldn't it's there's that's what which who whom whose
why how what's`) {
		m[w] = true
	}
	return m
}()

// inventedFacts returns the facts of text that appear in none of sources.
func inventedFacts(text string, sources []string) []string {
	have := map[string]bool{}
	for _, s := range sources {
		for _, t := range tokens(s) {
			have[t] = true
		}
	}
	var missing []string
	for _, f := range facts(text) {
		if !have[f] {
			missing = append(missing, f)
		}
	}
	return missing
}

// instructionLike reports whether text reads like an instruction addressed
// to a model rather than a fact about the user or project: a planted
// prompt that consolidation must not promote into the core profile. The
// detector is redact.Instructions, the same that add, import and confirm
// run; why is the entry's Pending note.
func instructionLike(text string) (bool, string) {
	why := mdmem.InstructionNote(text)
	return why != "", why
}

// contentKey is the token sequence of a text without its fillerWords: two
// texts with the same key state the same thing in the same words, up to
// case, punctuation and fillers ("The order service uses Redis." and
// "order service uses redis"). A near duplicate whose key differs changes
// a word that carries meaning ("main gate" → "side gate") and is never
// merged as a duplicate.
func contentKey(toks []string) string {
	var b strings.Builder
	for _, t := range toks {
		if fillerWords[t] {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(t)
	}
	return b.String()
}

// fillerWords are the words whose presence or absence alone does not
// change what a memory states: articles, the present forms of "be" and a
// few fillers. Negations, quantifiers, prepositions, tense and modal
// verbs carry meaning and are not here.
var fillerWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an the that is are am be it its of also please now currently`) {
		m[w] = true
	}
	return m
}()

// changedWords returns the content words of a missing from b and of b
// missing from a, for a reason line ("main → side"); "" when none is.
func changedWords(a, b string) string {
	in := func(w string, s []string) bool {
		for _, x := range s {
			if x == w {
				return true
			}
		}
		return false
	}
	fa, fb := strings.Fields(a), strings.Fields(b)
	var gone, came []string
	for _, w := range fa {
		if !in(w, fb) {
			gone = append(gone, w)
		}
	}
	for _, w := range fb {
		if !in(w, fa) {
			came = append(came, w)
		}
	}
	if len(gone) == 0 && len(came) == 0 {
		return ""
	}
	return fmt.Sprintf("%q → %q", strings.Join(gone, " "), strings.Join(came, " "))
}
