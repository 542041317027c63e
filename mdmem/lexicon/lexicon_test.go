package lexicon

import (
	"slices"
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
