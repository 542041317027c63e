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

// joinSplitWordsFull is joinSplitWords without mayJoin, as it was.
func joinSplitWordsFull(n string) string {
	if !hasWordPrefix(n) {
		return n
	}
	words := strings.Fields(n)
	words2 := make([]string, 0, len(words))
	changed := false
	dw, prefixes := detectorWords(), wordPrefixes()
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
