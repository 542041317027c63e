package consolidate

import (
	"hash/fnv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokens splits text into lower-case word tokens: runs of letters and
// digits, keeping '.', ',' and ':' between two digits ("3.11", "10:30")
// and '-', '_', '/' inside a word ("order-service").
func tokens(s string) []string {
	var out []string
	var b strings.Builder
	flush := func() {
		if b.Len() > 0 {
			out = append(out, b.String())
			b.Reset()
		}
	}
	rs := []rune(s)
	for i, r := range rs {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(unicode.ToLower(r))
		case (r == '.' || r == ',' || r == ':') && i > 0 && i+1 < len(rs) && unicode.IsDigit(rs[i-1]) && unicode.IsDigit(rs[i+1]):
			b.WriteRune(r)
		case (r == '-' || r == '_' || r == '/') && b.Len() > 0 && i+1 < len(rs) && (unicode.IsLetter(rs[i+1]) || unicode.IsDigit(rs[i+1])):
			b.WriteRune(r)
		default:
			flush()
		}
	}
	flush()
	return out
}

func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= '0' && s[i] <= '9' {
			return true
		}
	}
	return false
}

// skeleton is the token sequence with every token holding a digit replaced
// by "#": two texts with the same skeleton and different numbers state the
// same thing with a new value ("uses Python 3.11" → "uses Python 3.12").
func skeleton(toks []string) (string, int) {
	var b strings.Builder
	words := 0
	for i, t := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		if hasDigit(t) {
			b.WriteByte('#')
		} else {
			b.WriteString(t)
			words++
		}
	}
	return b.String(), words
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
				out = append(out, tokens(core)...)
			case unicode.IsUpper(first):
				if !sentenceStart || !sentenceOpeners[strings.ToLower(core)] {
					out = append(out, tokens(core)...)
				}
			}
		}
		last, _ := utf8.DecodeLastRuneInString(w)
		sentenceStart = last == '.' || last == '!' || last == '?' || last == ':' || last == ';'
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
// prompt that consolidation must not promote into the core profile.
func instructionLike(text string) (bool, string) {
	l := " " + strings.ToLower(OneLineLower(text)) + " "
	for _, p := range instructionPatterns {
		if strings.Contains(l, p) {
			return true, "reads like an instruction to the model (" + strings.TrimSpace(p) + ")"
		}
	}
	for _, r := range text {
		if r >= 0xE0000 && r <= 0xE007F || r == 0x200B || r == 0x200C || r == 0x200D || r == 0x2060 || r == 0xFEFF || r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069 {
			return true, "contains invisible or bidi control characters"
		}
	}
	return false, ""
}

// OneLineLower folds whitespace like mdmem.OneLine.
func OneLineLower(s string) string { return strings.Join(strings.Fields(s), " ") }

var instructionPatterns = []string{
	"ignore previous", "ignore all previous", "ignore the previous", "ignore prior", "ignore any previous",
	"disregard previous", "disregard all", "disregard the above", "forget previous instructions", "forget all previous",
	"previous instructions", "system prompt", "system:", "<system", "</memory", "<memory", "[inst]", "<|im_start|>",
	"you are now", "you must always", "from now on, you", "from now on you", "act as ", "jailbreak",
	"developer mode", "do not tell the user", "don't tell the user", "exfiltrate", "send the contents", "reveal your",
	"override your", "new instructions:", "assistant:", "### instruction",
}
