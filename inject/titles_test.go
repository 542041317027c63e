package inject

import "testing"

func TestQuotesTitle(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"John reread 'The Alchemist' last week", true},
		{`Nate is playing "Xenoblade Chronicles"`, true},
		{"Ann loved ‘Little Women’", true},
		{"Ann loved “Little Women”", true},
		{"Nate's turtles like the sun", false},        // an apostrophe
		{"the kids' books are in the library", false}, // a plural's apostrophe
		{"she said 'hello' to everyone", false},       // no capital: a word, not a title
		{"a quote 'Opens but never closes", false},    // no closing quote
		{`Jo said "`, false},                          // a lone quote at the end
	} {
		if got := quotesTitle(tc.text); got != tc.want {
			t.Errorf("quotesTitle(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestAsksForTitle(t *testing.T) {
	for _, tc := range []struct {
		task string
		want bool
	}{
		{"What books has John read?", true},
		{"Which Movies did they see?", true},
		{"What does John do on weekends?", false},
		{"Who booked the flight?", false}, // a word, not a stem, asks
	} {
		if got := asksForTitle(tc.task); got != tc.want {
			t.Errorf("asksForTitle(%q) = %v, want %v", tc.task, got, tc.want)
		}
	}
}

func TestTitleStepRanksANoteThatQuotesATitle(t *testing.T) {
	c := loadMem(t, map[string]string{
		"topics/ann.md": "# Ann\n\n" +
			"- [fact-001] Ann liked the beach on holiday (conversation · 2023-08-01)\n" +
			"- [fact-002] Ann liked 'The Hobbit' on holiday (conversation · 2023-08-02)\n",
	})
	p := Rankers[DefaultRanker]
	task := "What books has Ann liked?"
	if hits := c.Rank(p, task, nil, nil); len(hits) == 0 || c.Note(hits[0].Doc).ID != "fact-002" {
		t.Errorf("%q: best hit %v, want fact-002", task, hits)
	}
	p.Titles = 0
	if hits := c.Rank(p, task, nil, nil); len(hits) > 0 && c.Note(hits[0].Doc).ID == "fact-002" {
		t.Errorf("%q: fact-002 ranks first without the title step too: the test shows nothing", task)
	}
}
