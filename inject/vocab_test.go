package inject

import (
	"fmt"
	"sort"
	"testing"
)

// vocabFiles is a small memory whose notes say things in other words
// than the questions below.
var vocabFiles = map[string]string{
	"topics/melanie.md": "# Melanie\n\n" +
		"- [fact-001] Melanie took her kids to a pottery workshop (conversation · 2023-07-15)\n" +
		"- [fact-002] Melanie and her grandmother went on a roadtrip to the canyon (conversation · 2023-08-01)\n" +
		"- [fact-003] Melanie grows tomatoes in the back garden (conversation · 2023-08-02)\n",
	"topics/melissa-jones.md": "# Melissa Jones\n\n" +
		"- [fact-004] Melissa Jones plays the violin (conversation · 2023-08-03)\n",
	"topics/bob.md": "# Bob\n\n" +
		"- [fact-005] Bob repairs bikes (conversation · 2023-08-04)\n" +
		"- [fact-007] Bob teaches children to swim (conversation · 2023-08-06)\n",
	"topics/bobby.md": "# Bobby\n\n" +
		"- [fact-006] Bobby sails (conversation · 2023-08-05)\n",
	"topics/nina.md": "# Nina\n\n" +
		"- [fact-008] Nina plays chess with her neighbour (conversation · 2023-08-07)\n" +
		"- [fact-009] Nina goes skiing every winter (conversation · 2023-08-08)\n",
}

func TestVocabTermsStandForTheTasksWordsInTheMemorysForm(t *testing.T) {
	c := loadMem(t, vocabFiles)
	ix := c.Index(Rankers[DefaultRanker].An)
	for _, tc := range []struct{ name, task, want string }{
		{"a synonym the memory holds, for a word it lacks, at full weight",
			"What did her daughter's children make?", "[kid:0.5]"},
		{"a synonym for a word the memory lacks, at full weight",
			"What did her child make?", "[kid:1]"},
		{"a synonym the task names too is not added twice",
			"Who went with her grandma and her grandmother?", "[]"},
		{"a synonym beside the word the memory holds, at half weight",
			"Which kids went to the workshop?", "[children:0.5]"},
		{"two words the memory writes as one", "Where did the road trip go?", "[roadtrip:0.5 went:1]"},
		{"one word the memory writes as two", "What grows in the backgarden?", "[back:0.5 garden:0.5]"},
		{"a short form of a topic's name", "What did Mel make?", "[melani:1]"},
		{"a short form two topics begin with: none", "What does Bo repair?", "[]"},
		{"a slug of several words is not a name's long form", "What does Meliss play?", "[]"},
		{"a short form at a sentence's start is not taken for a name", "Mel made what?", "[]"},
		{"a word the memory holds is left alone", "Did Melanie visit the canyon?", "[]"},
		{"another form of an irregular verb, for a form the memory lacks", "Who did Melanie take to the workshop?", "[took:1]"},
		{"things of the kind a word asks for, at a quarter of its weight",
			"What instruments does Melissa have?", "[violin:0.25]"},
		{"a thing of the kind the task names itself is not added again",
			"Does Melissa play the violin or other instruments?", "[]"},
		{"no match anywhere: nothing added", "What is the capital of Peru?", "[]"},
	} {
		held := map[string]bool{}
		for _, q := range ix.query(tc.task, nil) {
			held[q.text] = true
		}
		var got []string
		for term, w := range c.vocabTerms(ix, tc.task, held) {
			got = append(got, fmt.Sprintf("%s:%g", term, w))
		}
		sort.Strings(got)
		if s := fmt.Sprint(sortedStrings(got)); s != tc.want {
			t.Errorf("%s: %q: added %s, want %s", tc.name, tc.task, s, tc.want)
		}
	}
}

func TestVocabStepRanksANoteWrittenInOtherWords(t *testing.T) {
	c := loadMem(t, vocabFiles)
	for _, tc := range []struct{ task, want string }{
		{"Where did her grandma go?", "fact-002"},
		{"Who came on the road trip?", "fact-002"},
		{"Which sports does Nina like?", "fact-009"},
	} {
		p := Rankers[DefaultRanker]
		hits := c.Rank(p, tc.task, nil, nil)
		if len(hits) == 0 || c.Note(hits[0].Doc).ID != tc.want {
			t.Errorf("%q: best hit %v, want %s", tc.task, hits, tc.want)
		}
		p.Vocab = false
		if hits := c.Rank(p, tc.task, nil, nil); len(hits) > 0 && c.Note(hits[0].Doc).ID == tc.want {
			t.Errorf("%q: %s ranks first without the vocabulary step too: the test shows nothing", tc.task, tc.want)
		}
	}
}

// TestClassifierWordsAreNotTerms: "kind of", "type of", "sort of" in a
// task say what sort of answer is wanted, so a note holding "kind" or
// "type" is not a match; the words still count elsewhere.
func TestClassifierWordsAreNotTerms(t *testing.T) {
	c := loadMem(t, map[string]string{"topics/db.md": "# DB\n\n" +
		"- [fact-001] The orders table has a btree index (conversation · 2023-07-15)\n" +
		"- [fact-002] The type checker runs in CI (conversation · 2023-07-16)\n" +
		"- [fact-003] Mel is kind to the new hires (conversation · 2023-07-17)\n"})
	for _, tc := range []struct{ task, want string }{
		{"What type of index does the orders table use?", "fact-001"},
		{"What kind of index is it, what sort of table?", "fact-001"},
		{"Which kinds of index, which types of table?", "fact-001"},
		{"When does the type checker run?", "fact-002"},
		{"Is Mel kind?", "fact-003"},
	} {
		var got []string
		for _, h := range c.Rank(Rankers[DefaultRanker], tc.task, nil, nil) {
			got = append(got, c.Note(h.Doc).ID)
		}
		if fmt.Sprint(got) != "["+tc.want+"]" {
			t.Errorf("%q: hits %v, want [%s]", tc.task, got, tc.want)
		}
	}
}
