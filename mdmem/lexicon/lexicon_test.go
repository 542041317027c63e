package lexicon

import (
	"slices"
	"strings"
	"testing"
)

func TestSynonymsAndCanonicalForms(t *testing.T) {
	for _, tc := range []struct {
		word, canonical string
		synonyms        []string
	}{
		{"mum", "mother", []string{"mother", "mom", "mommy", "mummy"}},
		{"mother", "mother", []string{"mom", "mum", "mommy", "mummy"}},
		{"kids", "children", []string{"children"}},
		{"grandma", "grandmother", []string{"grandmother", "granny"}},
		{"fall", "fall", nil}, // not "autumn": "prices fall"
		{"Mum", "Mum", nil},   // lower-case words only
		{"database", "database", nil},
	} {
		if got := Canonical(tc.word); got != tc.canonical {
			t.Errorf("Canonical(%q) = %q, want %q", tc.word, got, tc.canonical)
		}
		if got := Synonyms(tc.word); !slices.Equal(got, tc.synonyms) {
			t.Errorf("Synonyms(%q) = %q, want %q", tc.word, got, tc.synonyms)
		}
	}
}

func TestEveryWordIsInOneGroup(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range groups {
		if len(g) < 2 {
			t.Errorf("group %q has one word", g)
		}
		for _, w := range g {
			if seen[w] {
				t.Errorf("%q is in two groups: its canonical form would depend on their order", w)
			}
			seen[w] = true
		}
	}
}

func TestFormsOfIrregularVerbs(t *testing.T) {
	for _, tc := range []struct {
		word  string
		forms []string
	}{
		{"went", []string{"go", "gone"}},
		{"go", []string{"went", "gone"}},
		{"made", []string{"make"}},
		{"bought", []string{"buy"}},
		{"walked", nil}, // regular: the stemmer's
		{"left", nil},   // also a direction
		{"Went", nil},   // lower-case words only
	} {
		if got := Forms(tc.word); !slices.Equal(got, tc.forms) {
			t.Errorf("Forms(%q) = %q, want %q", tc.word, got, tc.forms)
		}
	}
}

func TestEveryVerbFormIsInOneVerb(t *testing.T) {
	seen := map[string]bool{}
	for _, v := range verbs {
		if len(v) < 2 {
			t.Errorf("verb %q has one form", v)
		}
		for _, w := range v {
			if seen[w] {
				t.Errorf("%q is a form of two verbs", w)
			}
			seen[w] = true
		}
	}
}

func TestMembersOfAKind(t *testing.T) {
	for _, tc := range []struct {
		word, member string
		want         bool
	}{
		{"sports", "tennis", true},
		{"sport", "tennis", true},
		{"instruments", "violin", true},
		{"countries", "spain", true},
		{"places", "london", true},
		{"tennis", "sports", false}, // a member asks for nothing
		{"Sports", "tennis", false}, // lower-case words only
		{"database", "", false},
	} {
		if got := slices.Contains(Members(tc.word), tc.member); got != tc.want {
			t.Errorf("Members(%q) holds %q: %v, want %v", tc.word, tc.member, got, tc.want)
		}
	}
	if Members("tennis") != nil {
		t.Errorf("Members(%q) = %q, want none", "tennis", Members("tennis"))
	}
}

func TestKindsAreLowerCaseWordsAndNoKindHoldsItsOwnAsk(t *testing.T) {
	word := func(w string) bool {
		for _, r := range w {
			if r < 'a' || r > 'z' {
				return false
			}
		}
		return len(w) > 1
	}
	for _, k := range kinds {
		asks := strings.Fields(k.asks)
		for _, m := range append(slices.Clone(asks), strings.Fields(k.members)...) {
			if !word(m) {
				t.Errorf("kind %q: %q is not one lower-case word", asks[0], m)
			}
		}
		for _, m := range strings.Fields(k.members) {
			if slices.Contains(asks, m) {
				t.Errorf("kind %q holds its own ask %q", asks[0], m)
			}
		}
	}
}
