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

func TestAsksFor(t *testing.T) {
	for _, tc := range []struct {
		task string
		want answerType
	}{
		{"What books has John read?", answerTitle},
		{"Which Movies did they see?", answerTitle},
		{"Where did Caroline move from?", answerPlace},
		{"Which countries has Maria visited?", answerPlace},
		{"Which books did she read on her trip?", answerTitle | answerPlace},
		{"What does John do on weekends?", 0},
		{"Who booked the flight?", 0}, // a word, not a stem, asks
	} {
		if got := asksFor(tc.task); got != tc.want {
			t.Errorf("asksFor(%q) = %b, want %b", tc.task, got, tc.want)
		}
	}
}

func TestNamesPlace(t *testing.T) {
	c := loadMem(t, map[string]string{
		"topics/melanie.md": "# Melanie\n\n- [fact-001] Melanie paints (conversation · 2023-08-01)\n",
	})
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"Maria took a solo trip to Spain last year", true},
		{"John explored the Pacific Northwest coast", true},
		{"Caroline moved from Sweden.", true},
		{"Caroline talked to Melanie about art", false},  // a topic's name: a person
		{"Caroline talked to Mel about art", false},      // a topic's short form
		{"Tim went to the library and to school", false}, // no capital
		{"In March Tim started a new job", false},        // a sentence's first word
	} {
		if got := c.namesPlace(tc.text); got != tc.want {
			t.Errorf("namesPlace(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}

func TestAnswerTypeStepRanksANoteThatGivesTheAnswer(t *testing.T) {
	c := loadMem(t, map[string]string{
		"topics/ann.md": "# Ann\n\n" +
			"- [fact-001] Ann liked the beach on holiday (conversation · 2023-08-01)\n" +
			"- [fact-002] Ann liked 'The Hobbit' on holiday (conversation · 2023-08-02)\n" +
			"- [fact-003] Ann enjoyed the food a lot (conversation · 2023-08-03)\n" +
			"- [fact-004] Ann enjoyed a week in Tarragona (conversation · 2023-08-04)\n",
	})
	for _, tc := range []struct{ task, want string }{
		{"What books has Ann liked?", "fact-002"},
		{"Which places has Ann enjoyed?", "fact-004"},
	} {
		p := Rankers[DefaultRanker]
		if hits := c.Rank(p, tc.task, nil, nil); len(hits) == 0 || c.Note(hits[0].Doc).ID != tc.want {
			t.Errorf("%q: best hit %v, want %s", tc.task, hits, tc.want)
		}
		p.AnswerTypes = 0
		if hits := c.Rank(p, tc.task, nil, nil); len(hits) > 0 && c.Note(hits[0].Doc).ID == tc.want {
			t.Errorf("%q: %s ranks first without the answer-type step too: the test shows nothing", tc.task, tc.want)
		}
	}
}
