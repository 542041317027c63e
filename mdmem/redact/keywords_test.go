package redact

import (
	"math/rand/v2"
	"os"
	"path/filepath"
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
