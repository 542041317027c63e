package redact

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// keywordTexts returns the detectors' corpora (every line of testdata,
// raw, lower-cased and as the detectors read it) and random texts built
// from keywords, their pieces and noise.
func keywordTexts(t *testing.T, lists [][]string) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/*")
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(data), "\n") {
			texts = append(texts, l, lowerASCII(l), lowerASCII(Fold(l)))
		}
	}
	var kws []string
	for _, l := range lists {
		kws = append(kws, l...)
	}
	rng := rand.New(rand.NewPCG(25, 1))
	noise := []string{" ", "a", "e", "-", "_", ".", "<", "|", "\n", "0", "é", "x"}
	for range 20000 {
		var b strings.Builder
		for range rng.IntN(12) {
			switch k := kws[rng.IntN(len(kws))]; rng.IntN(4) {
			case 0: // a whole keyword
				b.WriteString(k)
			case 1: // its beginning
				b.WriteString(k[:rng.IntN(len(k)+1)])
			case 2: // its end
				b.WriteString(k[rng.IntN(len(k)+1):])
			default:
				b.WriteString(noise[rng.IntN(len(noise))])
			}
		}
		texts = append(texts, b.String())
	}
	return texts
}

func TestKeywordIndexFindsWhatContainsFinds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lists [][]string
	}{
		{"rules", func() [][]string {
			var l [][]string
			for _, r := range rules {
				l = append(l, r.keywords)
			}
			return l
		}()},
		{"patterns", func() [][]string {
			var l [][]string
			for _, p := range patterns {
				l = append(l, p.keywords)
			}
			return l
		}()},
		{"edge cases", [][]string{{""}, {"a"}, {"ab", "abc"}, {"aa"}, nil, {"<", "<|"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			x := newKeywordIndex(tc.lists)
			texts := keywordTexts(t, tc.lists)
			texts = append(texts, "", "a", "aa", "aaa", "ab", "<", "<|")
			for _, s := range texts {
				h := x.hits(s)
				for i, kws := range tc.lists {
					want := false
					for _, k := range kws {
						want = want || strings.Contains(s, k)
					}
					if h.has(i) != want {
						t.Fatalf("list %d %q in %q: index says %v, strings.Contains %v", i, kws, s, h.has(i), want)
					}
				}
			}
		})
	}
}

// mixedScriptWord skips ASCII texts: that is exact only while no
// confusable is ASCII.
func TestConfusablesAreNotASCII(t *testing.T) {
	for r := range confusables {
		if r < 0x80 {
			t.Errorf("confusable %q is ASCII: mixedScriptWord's shortcut would miss it", r)
		}
	}
}

// joinSplitWordsFull is joinSplitWords without mayJoin, as it was, words
// split by strings.Fields and looked up in the maps.
func joinSplitWordsFull(n string) string {
	words := strings.Fields(n)
	dw, prefixes := detectorWords(), wordPrefixes()
	if !slices.ContainsFunc(words, func(w string) bool { return prefixes[w] }) {
		return n
	}
	words2 := make([]string, 0, len(words))
	changed := false
	var j []byte
	for i := 0; i < len(words); {
		joined := false
		// A join is a detector word that words[i], not one itself, begins:
		// words[i] is one of wordPrefixes, or a single letter.
		starts := !dw[words[i]] && (len(words[i]) < 2 || prefixes[words[i]])
		for k := 3; k >= 2 && !joined && starts; k-- {
			if i+k > len(words) {
				continue
			}
			j = j[:0]
			for _, w := range words[i : i+k] {
				j = append(j, w...)
			}
			if len(j) >= 6 && dw[string(j)] {
				words2 = append(words2, string(j))
				i += k
				joined, changed = true, true
			}
		}
		if !joined {
			words2 = append(words2, words[i])
			i++
		}
	}
	if !changed {
		return n
	}
	return strings.Join(words2, " ")
}

func TestMayJoinSkipsOnlyTextsThatJoinNothing(t *testing.T) {
	var words []string
	for w := range detectorWords() {
		words = append(words, w)
	}
	slices.Sort(words)
	texts := keywordTexts(t, [][]string{words})
	rng := rand.New(rand.NewPCG(25, 3))
	for range 20000 { // detector words split in pieces, among others
		var b strings.Builder
		for range rng.IntN(10) {
			w := words[rng.IntN(len(words))]
			switch cut := rng.IntN(len(w) + 1); rng.IntN(3) {
			case 0:
				b.WriteString(w[:cut] + " " + w[cut:])
			case 1:
				cut2 := cut + rng.IntN(len(w)-cut+1)
				b.WriteString(w[:cut] + " " + w[cut:cut2] + "\t " + w[cut2:])
			default:
				b.WriteString([]string{"for", "a", "the", "pre", "é", "x1"}[rng.IntN(6)])
			}
			b.WriteString(" ")
		}
		texts = append(texts, b.String(), strings.Repeat(b.String(), 8))
	}
	joined := 0
	for _, s := range texts {
		want := joinSplitWordsFull(s)
		if got := joinSplitWords(s); got != want {
			t.Fatalf("joinSplitWords(%q) = %q, without the shortcut %q", s, got, want)
		}
		if want != s {
			joined++
		}
	}
	if joined < 1000 {
		t.Fatalf("only %d texts join words: the test does not exercise mayJoin", joined)
	}
}

func TestSpacedIsFieldsJoined(t *testing.T) {
	texts := keywordTexts(t, [][]string{{"ab"}})
	texts = append(texts, "", " ", "a", " a", "a ", "a  b", "a\tb", "a\u00a0b", "a\u2003b", "a b", "\u00e9 b", "a\x85b")
	for _, s := range texts {
		if got, want := spaced(s), strings.Join(strings.Fields(s), " "); got != want {
			t.Fatalf("spaced(%q) = %q, want %q", s, got, want)
		}
	}
}

// scanOneLoop is scanOne as a walk over every rule, each skipped by its
// own tests: what scanOne's sets of rules must give.
func (sc Scanner) scanOneLoop(n *normText, joined bool, found []Finding) []Finding {
	lower := lowerASCII(n.s)
	run, hex := -1, 0
	hits := ruleKeywords().hits(lower)
	for i, r := range rules {
		if r.pii && !sc.PII || joined && !r.join {
			continue
		}
		if r.keywords != nil && !hits.has(i) || r.keywords == nil && digitRun(n.s) < r.minDigits {
			continue
		}
		found = scanRule(r, n, lower, &run, &hex, found)
	}
	return found
}

func TestScanOneRunsTheRulesALoopOverThemRuns(t *testing.T) {
	var lists [][]string
	for _, r := range rules {
		lists = append(lists, r.keywords)
	}
	texts := keywordTexts(t, lists)
	rng := rand.New(rand.NewPCG(25, 2))
	pieces := []string{"4539", "1488", "0343", "6467", "DE89", "3704", "0044", "0532", "0130", "00", "123-45-6789", " ", "-", "\n", "+1 ", "(555) ", "iban ", "ssn ", "card ", "a", "@", "x.com"}
	for range 5000 {
		var b strings.Builder
		for range rng.IntN(10) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		texts = append(texts, b.String())
	}
	found := 0
	for _, text := range texts {
		for _, mode := range []int{joinNone, joinLines, joinSpaces} {
			n := normalise(text, mode)
			for _, sc := range []Scanner{{}, {PII: true}} {
				got, want := sc.scanOne(&n, mode != joinNone, nil), sc.scanOneLoop(&n, mode != joinNone, nil)
				if !slices.Equal(got, want) {
					t.Fatalf("scanOne(%q, mode %d, PII %v) = %v, the loop over the rules gives %v", text, mode, sc.PII, got, want)
				}
				found += len(got)
			}
		}
	}
	if found == 0 {
		t.Fatal("no text had a finding: the comparison proves nothing")
	}
	t.Logf("%d texts, %d findings", len(texts), found)
}

// wordKind answers without a look-up for a word that is not 2 to longest
// ASCII lower-case letters: exact only while every detector word and
// word prefix is one.
func TestWordKindIsTheMapsAnswer(t *testing.T) {
	k := wordKinds()
	dw, prefixes := detectorWords(), wordPrefixes()
	for w := range k.kinds {
		if len(w) < 2 || len(w) > k.longest || strings.Trim(w, "abcdefghijklmnopqrstuvwxyz") != "" {
			t.Fatalf("%q is a detector word or prefix outside wordKind's shortcut", w)
		}
		if !k.filter.has(fnv1a(w)) {
			t.Fatalf("%q is a detector word or prefix the filter does not hold", w)
		}
	}
	filtered := 0
	for _, w := range strings.Fields("seed note about subject and widget for the scale benchmark deploys run on fridays user prefers dark mode") {
		if wordKind(w) == 0 && !k.filter.has(fnv1a(w)) {
			filtered++
		}
	}
	if filtered == 0 {
		t.Error("the filter answers no word of plain prose: it saves no look-up")
	}
	words := []string{"", "a", "pre", "Pre", "previous", "previou", "instructions", "é", "x1", "ignore", "ign0re"}
	for w := range k.kinds {
		words = append(words, w, strings.ToUpper(w), w+"s", w+"x", w[1:])
	}
	for _, w := range words {
		want := uint8(0)
		if dw[w] {
			want |= kindDetector
		}
		if prefixes[w] {
			want |= kindPrefix
		}
		if got := wordKind(w); got != want {
			t.Fatalf("wordKind(%q) = %d, the maps say %d", w, got, want)
		}
	}
}
