package inject

import (
	"context"
	"fmt"
	"testing"
)

// entityFiles is a small synthetic memory: two people, each a topic,
// whose notes mention each other.
var entityFiles = map[string]string{
	"topics/caroline.md": "# Caroline\n\n" +
		"- [fact-001] Caroline is reading about adoption agencies for her research (conversation · 2023-05-08)\n" +
		"- [fact-002] Caroline paints sunsets on weekends (conversation · 2023-05-08)\n",
	"topics/melanie.md": "# Melanie\n\n" +
		"- [fact-003] Melanie helped Caroline research adoption agencies (conversation · 2023-06-01)\n" +
		"- [fact-004] Melanie runs to clear her mind (conversation · 2023-06-01)\n",
	"topics/postgres.md": "# Postgres\n\n" +
		"- [fact-005] The migration locks the orders table for a minute (session · 2024-01-02)\n",
}

func TestTaskEntities(t *testing.T) {
	c := loadMem(t, entityFiles)
	ix := c.Index(Rankers[DefaultRanker].An)
	for _, tc := range []struct{ task, want string }{
		{"What did Caroline research?", "[carolin]"},
		{"What did Caroline's friend research?", "[carolin]"},
		{"Would Melanie and Caroline both like it?", "[carolin melani]"},
		{"Caroline went where?", "[]"},                        // begins a sentence
		{"What did she do? Melanie said so.", "[]"},           // begins a sentence
		{"what did melanie do", "[]"},                         // not written as a name
		{"Ask The Owner about it", "[]"},                      // a stop word; a word the memory lacks
		{"Why does the Postgres migration lock?", "[postgr]"}, // stemmed like the index
		{"Who is Bob?", "[]"},                                 // not in the memory
	} {
		var got []string
		for _, id := range taskEntities(ix, tc.task) {
			for w, x := range ix.Terms {
				if x == id {
					got = append(got, w)
				}
			}
		}
		if s := fmt.Sprint(sortedStrings(got)); s != tc.want {
			t.Errorf("%q: entities %s, want %s", tc.task, s, tc.want)
		}
	}
}

func sortedStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	if s == nil {
		return []string{}
	}
	return s
}

// TestEntityBoost: a question about Caroline's research matches
// Melanie's note, which names Caroline and both words, better than
// Caroline's own; the name in the question brings Caroline's note
// first. Without the entity step the order is the other way round, and
// a task naming both people, or none, leaves it as BM25 has it.
func TestEntityBoost(t *testing.T) {
	c := loadMem(t, entityFiles)
	first := func(p RankParams, task string) string {
		hits := c.Rank(p, task, nil, nil)
		if len(hits) == 0 {
			return ""
		}
		return c.Note(hits[0].Doc).ID
	}
	on := Rankers[DefaultRanker]
	if on.Entities <= 0 {
		t.Fatalf("the default ranker has no entity step")
	}
	off := on
	off.Entities = 0
	for _, tc := range []struct {
		p    RankParams
		task string
		want string
	}{
		{on, "What did Caroline research about adoption agencies?", "fact-001"},
		{off, "What did Caroline research about adoption agencies?", "fact-003"},
		{on, "what did caroline research about adoption agencies?", "fact-003"}, // no name written as one
		{on, "What did Caroline and Melanie research about adoption agencies?", "fact-003"},
		{on, "What did Melanie research about adoption agencies?", "fact-003"},
	} {
		if got := first(tc.p, tc.task); got != tc.want {
			t.Errorf("entities %g, %q: first %s, want %s", tc.p.Entities, tc.task, got, tc.want)
		}
	}
}

// TestEntityBoostCacheSameOutput: the entity step reads only postings,
// so the memory-mapped cache and the Markdown give the same block.
func TestEntityBoostCacheSameOutput(t *testing.T) {
	ctx := context.Background()
	dir := writeMem(t, entityFiles)
	if _, err := LoadCorpusFor(ctx, dir, true, o200k(t)); err != nil {
		t.Fatal(err)
	}
	cached, err := loadCached(ctx, dir)
	if err != nil || cached == nil || cached.lz == nil {
		t.Fatalf("cache not read in place: %v", err)
	}
	plain, err := LoadCorpus(ctx, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	var opts []Options
	for _, task := range []string{"What did Caroline research about adoption agencies?", "Would Melanie run?", "Why does the Postgres migration lock?"} {
		o := baseOpts(t)
		o.Task, o.Budget = task, 200
		opts = append(opts, o)
	}
	sameOutput(t, "entities", cached, plain, opts)
}
