package consolidate

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/memctl/memctl/mdmem"
)

// Whether two texts state the same fact is decided in one place: compare.
// Every stage that asks (exact and near duplicates, the same statement
// with a new value, the entry a candidate may update, which neighbours a
// model sees first, whether a model's merge may stand) reads its verdict.
//
// The comparison aligns the two token sequences (longest common
// subsequence) and classes what differs, hunk by hunk:
//
//   - fillers ("the", "is", "now", "currently"; fillerWords) do not count;
//   - a number, with the short unit or symbol beside it ("8%" → "5%",
//     "1 Gig" → "500 Mb", "7 days" → "7 weeks"), is the statement's value,
//     unless it names a thing: it stands in the subject ("Customer 881
//     pays …", "Meeting room 110 has …"), follows an identifier noun
//     ("port 8080", "ticket 4711"), is zero-padded ("007") or starts
//     with a letter ("web-03"); or it is a date, or a version in a
//     product's name ("Python 3.11 is the default");
//   - other words that change in the subject make it another thing's
//     statement ("the jackal database" / "the egret database"), in the
//     predicate a new value of the same slot or a complement ("the main
//     gate" / "the side gate"), which rules cannot tell apart;
//   - a negation added or removed, a unit's case ("MB" / "Mb") or another
//     symbol ("&&" / ";") changes what the text states.
//
// Two thresholds decide, both documented in docs/CONSOLIDATE.md:
// consolidate.near_duplicate, the share of the longer text's tokens the
// alignment matches (value hunks count as matched) at or above which two
// texts are one statement whose hunks are classed as above; and
// consolidate.related, the rarity-weighted share of the candidate's words
// the other text states (overlap), at or above which two texts are on the
// same subject, so that the candidate may be a new value of it.

// verdict is what compare makes of two texts.
type verdict int

const (
	// factOther: not about the same thing, as far as words tell.
	factOther verdict = iota
	// factRelated: on the same subject (overlap at least
	// consolidate.related), reworded: an update, a complement or another
	// fact; a model or a person decides.
	factRelated
	// factAnother: the same statement about another thing (identifier
	// numbers, a word of the subject swapped): both stand.
	factAnother
	// factAdds: the newer text says it adds to the older ("also",
	// "either", "too", "as well"): both stand.
	factAdds
	// factChanged: the same statement with a change rules cannot class
	// (a negation, a unit's case, a date, a version in a name, an
	// identifier in the predicate, a word of the predicate): a model or a
	// person decides; never merged by rule.
	factChanged
	// factUpdate: the same statement with new values of the same slot:
	// the newer wins.
	factUpdate
	// factDuplicate: the same fact, up to case, punctuation and fillers.
	factDuplicate
)

var verdictNames = [...]string{"other", "related", "another thing", "adds", "changed", "update", "duplicate"}

// String names the verdict (test output, notes).
func (v verdict) String() string { return verdictNames[v] }

// comparison is compare's answer: the verdict, the rarity-weighted
// overlap, what changes (for notes), and whether a negation or a unit
// changes (which no merge may fold away, whatever the verdict).
type comparison struct {
	v        verdict
	overlap  float64
	why      string
	negation bool
	unit     bool
	swap     bool // words or numbers of one text stand in place of the other's, token for token (not an insertion or a rewording)
}

// sameFactTexts compares two texts with every word weighted alike (no
// memory to take rarity from): for checks outside a plan's index.
func sameFactTexts(old, newer string, near, related float64) comparison {
	return compareItems(newItem(old, "", nil), newItem(newer, "", nil), near, related, nil)
}

// compare is the one comparison of an existing item (old) and a newer
// one, with the plan's thresholds and word rarity.
func (p *planner) compare(old, newer *item) comparison {
	return compareItems(old, newer, p.cfg.Consolidate.NearDuplicate, p.cfg.Consolidate.Related, func() float64 { return p.overlap(newer, old) })
}

// additiveWords in the newer text say it adds to the older one.
var additiveWords = map[string]bool{"also": true, "either": true, "too": true, "another": true, "additionally": true, "besides": true}

// updateMarkers say the newer text replaces a value; they are fillers
// for the comparison ("… on the 1 Gig plan now").
var updateMarkers = map[string]bool{"now": true, "currently": true, "anymore": true, "nowadays": true, "still": true}

func compareItems(old, newer *item, near, related float64, overlap func() float64) comparison {
	var c comparison
	if overlap != nil {
		c.overlap = overlap()
	} else {
		c.overlap = plainOverlap(old, newer)
	}
	c.negation = mdmem.Negated(mdmem.FoldWords(old.text)) != mdmem.Negated(mdmem.FoldWords(newer.text))
	if old.key == newer.key {
		if c.negation {
			c.v, c.why = factChanged, "adds or removes a negation"
			return c
		}
		if was, now, ok := caseChange(old.text, newer.text); ok {
			c.v, c.unit, c.why = factChanged, true, fmt.Sprintf("%q → %q", was, now)
			return c
		}
		if a, b := symbolsOf(old.text), symbolsOf(newer.text); a != b {
			c.v, c.why = factChanged, fmt.Sprintf("symbols %q → %q", a, b)
			return c
		}
		c.v = factDuplicate
		return c
	}
	a, b := tokens(old.text), tokens(newer.text)
	ca, cb := casedTokens(old.text), casedTokens(newer.text)
	if len(ca) != len(a) || len(cb) != len(b) {
		ca, cb = a, b
	}
	hs := diffHunks(a, b)
	matched := 0
	for _, h := range hs.hunks {
		matched += h.matchedBefore
	}
	matched += hs.tail
	var values, another, named, changed, adds, words int
	inPlace := true
	var whys []string
	pa, pb := predicateStart(ca), predicateStart(cb)
	for _, h := range hs.hunks {
		ga, gb := a[h.a0:h.a1], b[h.b0:h.b1]
		if anyOf(gb, additiveWords) && !anyOf(ga, additiveWords) {
			adds++ // "also" is a filler, but says the text adds
		}
		if allFillers(ga) && allFillers(gb) {
			matched += max(len(ga), len(gb))
			continue
		}
		subject := h.a0 < pa && h.b0 < pb
		switch kind := hunkKind(a, b, ca, cb, h, subject); kind {
		case hunkValue:
			values++
			matched += max(len(ga), len(gb))
		case hunkAnother:
			another++
			named++
			matched += max(len(ga), len(gb))
		case hunkUnsure:
			changed++
			matched += max(len(ga), len(gb))
		default:
			if subject && len(ga) > 0 && len(gb) > 0 && contentOnly(ga) && contentOnly(gb) {
				another++
			} else {
				words++
			}
		}
		inPlace = inPlace && len(ga) == len(gb)
		if w := changedWords(strings.Join(ga, " "), strings.Join(gb, " ")); w != "" {
			whys = append(whys, w)
		}
	}
	c.why = strings.Join(whys, ", ")
	c.swap = inPlace && len(whys) > 0
	if c.negation {
		c.why = "adds or removes a negation"
	}
	if c.unit = unitChanged(a, b); c.unit {
		c.why = "changes a unit: " + c.why
	}
	long := max(len(a), len(b))
	isNear := long > 0 && float64(matched) >= near*float64(long)
	switch {
	case adds > 0 && !c.negation:
		c.v = factAdds
	case named > 0 && !c.negation:
		// The subject names another thing by its number ("Customer 881"
		// / "Customer 882"): whatever else changes, it is another fact.
		c.v = factAnother
	case !isNear:
		if c.overlap >= related {
			c.v = factRelated
		}
	case c.negation:
		c.v = factChanged
	case another > 0:
		// Another subject ("Order service …" / "Billing service …"):
		// what its predicate says is that thing's, whatever it is.
		c.v = factAnother
	case changed > 0 || words > 0 || another > 0:
		c.v = factChanged
	case values > 0:
		c.v = factUpdate
	default:
		c.v = factChanged
		c.why = "word order"
	}
	return c
}

// plainOverlap is overlap with every word weighted alike.
func plainOverlap(old, newer *item) float64 {
	have := map[uint64]bool{}
	for _, h := range old.uni {
		have[h] = true
	}
	n := 0
	for _, h := range newer.uni {
		if have[h] {
			n++
		}
	}
	if len(newer.uni) == 0 {
		return 0
	}
	return float64(n) / float64(len(newer.uni))
}

// hunk is one place where two token sequences differ: a[a0:a1] became
// b[b0:b1]; matchedBefore tokens matched between the previous hunk and
// this one.
type hunk struct {
	a0, a1, b0, b1 int
	matchedBefore  int
}

type hunks struct {
	hunks []hunk
	tail  int // tokens matched after the last hunk
}

// diffHunks aligns a and b by their longest common subsequence and
// returns where they differ.
func diffHunks(a, b []string) (out hunks) {
	n, m := len(a), len(b)
	l := make([][]int, n+1)
	for i := range l {
		l[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				l[i][j] = l[i+1][j+1] + 1
			} else {
				l[i][j] = max(l[i+1][j], l[i][j+1])
			}
		}
	}
	i, j, run := 0, 0, 0
	cur := hunk{a0: -1}
	flush := func() {
		if cur.a0 >= 0 {
			cur.a1, cur.b1 = i, j
			out.hunks = append(out.hunks, cur)
			cur = hunk{a0: -1}
		}
	}
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			flush()
			run++
			i++
			j++
		default:
			if cur.a0 < 0 {
				cur = hunk{a0: i, b0: j, matchedBefore: run}
				run = 0
			}
			if j >= m || i < n && l[i+1][j] >= l[i][j+1] {
				i++
			} else {
				j++
			}
		}
	}
	flush()
	out.tail = run
	return out
}

// Kinds of hunk (hunkKind).
const (
	hunkWords   = iota // words changed
	hunkValue          // a number (with its unit) changed: a value
	hunkAnother        // a number that names a thing changed
	hunkUnsure         // a number changed that may be the value or name a thing
)

// hunkKind classes a hunk whose sides hold numbers (see the package
// comment above compareItems); a hunk without a number on both sides is
// hunkWords, unless it swaps only the unit after an unchanged number.
func hunkKind(a, b, ca, cb []string, h hunk, subject bool) int {
	ga, gb := a[h.a0:h.a1], b[h.b0:h.b1]
	if len(ga) == 0 || len(gb) == 0 {
		return hunkWords
	}
	if !subject && timeSide(ga) && timeSide(gb) {
		return hunkValue // "on Tuesdays and Wednesdays" → "on Mondays and Thursdays", "at lunchtime" → "in the morning"
	}
	if !numericSide(ga) || !numericSide(gb) {
		if len(ga) == 1 && len(gb) == 1 && unitWords[ga[0]] && unitWords[gb[0]] && h.a0 > 0 && isNumber(a[h.a0-1]) {
			return hunkValue // "7 days" → "7 weeks"
		}
		return hunkWords
	}
	kind := hunkValue
	for _, side := range []struct {
		toks, cased []string
		lo, hi      int
	}{{a, ca, h.a0, h.a1}, {b, cb, h.b0, h.b1}} {
		for i := side.lo; i < side.hi; i++ {
			if !isNumber(side.toks[i]) {
				continue
			}
			switch {
			case subject && !identifier(side.toks, i) && i == 1 && versionOfName(side.cased, i):
				kind = max(kind, hunkUnsure) // "Python 3.11 is the default": a new default, or another thing?
			case subject:
				if kind != hunkUnsure {
					kind = hunkAnother // "Customer 881 pays …": the number names whom it is about
				}
			case identifier(side.toks, i), dateLike(side.toks, i), versionOfName(side.cased, i):
				kind = hunkUnsure // "listens on port 8080": a new port, or a second one?
			}
		}
	}
	return kind
}

// timeSide reports whether the tokens name a time of a schedule: days,
// months, parts of the day ("Mondays and Thursdays", "in the morning"),
// with the small words that join them and fillers ("now").
func timeSide(toks []string) bool {
	n := 0
	for _, t := range toks {
		switch {
		case timeWords[t] || monthNames[t]:
			n++
		case !timeGlue[t] && isContentWord(t) && !updateMarkers[t]:
			return false
		}
	}
	return n > 0
}

// timeWords name days and parts of the day; timeGlue joins them.
var timeWords, timeGlue = func() (map[string]bool, map[string]bool) {
	w, g := map[string]bool{}, map[string]bool{}
	for _, d := range strings.Fields(`monday tuesday wednesday thursday friday saturday sunday weekday weekend
morning afternoon evening night`) {
		w[d], w[d+"s"] = true, true
	}
	for _, d := range strings.Fields(`lunchtime noon midday midnight dawn dusk daily weekly fortnightly monthly yearly annually`) {
		w[d] = true
	}
	for _, d := range strings.Fields(`in on at the a and or every each other`) {
		g[d] = true
	}
	return w, g
}()

// numericSide reports whether the tokens are a number with at most a
// short unit or symbol beside it ("8", "%"; "1", "gig"; "500", "mb").
func numericSide(toks []string) bool {
	digits, other := 0, 0
	for _, t := range toks {
		switch {
		case isNumber(t):
			digits++
		case !isContentWord(t) || updateMarkers[t]:
		case unitWords[t] || len(t) <= 4:
			other++
		default:
			return false
		}
	}
	return digits > 0 && other <= digits+1
}

// unitChanged reports whether a number of a stays in b with another unit
// after it ("7 days" → "7 weeks").
func unitChanged(a, b []string) bool {
	units := func(t []string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(t); i++ {
			if r, _ := utf8.DecodeRuneInString(t[i]); unicode.IsDigit(r) && unitWords[t[i+1]] {
				m[t[i]] = strings.TrimSuffix(t[i+1], "s")
			}
		}
		return m
	}
	ua, ub := units(a), units(b)
	for n, u := range ua {
		if v, ok := ub[n]; ok && v != u {
			return true
		}
	}
	return false
}

// predicateStart is the index of the first verb of a statement (cased
// tokens): an auxiliary or common verb (subjectVerbs, baseVerbs), or a
// lower-case word in -s after the first token, not after a determiner or
// a preposition ("pays", "runs", "listens"; not "for systems"). The
// tokens before it are the subject, which says what the statement is
// about; len(toks) when no verb is found: a label ("ordered note number
// 007") names its thing throughout.
func predicateStart(toks []string) int {
	if len(toks) > 0 && (baseVerbs[strings.ToLower(toks[0])] || openingVerbs[strings.ToLower(toks[0])]) {
		return 0 // "Prefers C++ for …", "Use C# for …": no subject
	}
	for i := 1; i < len(toks); i++ {
		t := toks[i]
		lt := strings.ToLower(t)
		if subjectVerbs[lt] || baseVerbs[lt] {
			return i
		}
		r, _ := utf8.DecodeRuneInString(t)
		if !unicode.IsLower(r) || len(t) < 4 || hasDigit(t) || strings.ContainsAny(t, "-_/") {
			continue
		}
		if strings.HasSuffix(t, "s") && !strings.HasSuffix(t, "ss") && !strings.HasSuffix(t, "us") && !strings.HasSuffix(t, "is") &&
			!determiners[strings.ToLower(toks[i-1])] && !prepositions[strings.ToLower(toks[i-1])] && !unitWords[lt] && !numberWords[strings.ToLower(toks[i-1])] {
			return i
		}
	}
	return len(toks)
}

func allFillers(toks []string) bool {
	for _, t := range toks {
		if isContentWord(t) && !updateMarkers[t] {
			return false
		}
	}
	return true
}

func anyOf(toks []string, set map[string]bool) bool {
	for _, t := range toks {
		if set[t] {
			return true
		}
	}
	return false
}

// contentOnly reports whether every token is a word without a digit.
func contentOnly(toks []string) bool {
	for _, t := range toks {
		if hasDigit(t) || !isContentWord(t) {
			return false
		}
	}
	return true
}

// isNumber reports whether a token is a number: it holds a digit, or is
// a number word ("three", "twelve").
func isNumber(t string) bool { return hasDigit(t) || numberWords[t] }

// numberWords are the numbers spelled as words; baseVerbs the common
// verbs a plural subject takes ("we run", "they use").
var numberWords, baseVerbs = func() (map[string]bool, map[string]bool) {
	n, v := map[string]bool{}, map[string]bool{}
	for _, w := range strings.Fields(`zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen
sixteen seventeen eighteen nineteen twenty thirty forty fifty sixty seventy eighty ninety hundred thousand million billion
half quarter dozen`) {
		n[w] = true
	}
	for _, w := range strings.Fields(`run use keep get go take need want prefer like live work pay send store book buy
get sees see meet stay start end open close cost costs`) {
		v[w] = true
	}
	return n, v
}()

// openingVerbs open an instruction or a preference without a subject
// ("Prefers dark mode", "Avoid global state"); prepositions are never
// followed by a verb.
var openingVerbs, prepositions = func() (map[string]bool, map[string]bool) {
	o, p := map[string]bool{}, map[string]bool{}
	for _, w := range strings.Fields(`uses prefers avoid avoids keeps runs never always do don't check ask asks sends stores books buys pays
call calls give gives write writes read reads add adds set sets put puts make makes allow allows require requires`) {
		o[w] = true
	}
	for _, w := range strings.Fields(`for of in on at with to from by about into over under after before during per via than like`) {
		p[w] = true
	}
	return o, p
}()
