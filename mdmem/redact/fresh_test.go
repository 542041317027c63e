package redact

import "testing"

// TestFreshEvasionsScore scores the second fresh set of evasions
// (testdata/fresh-2.txt), written before the detector was changed for
// its kinds and kept apart from evasions.txt: at most 1 in 20 may get
// past Instructions. The person's own constraints in the same words
// (person_rules-2.txt) must stay the person's: at least 9 in 10 hold
// nothing Concealment reads, and none reads as an instruction to
// Instructions only because of those words' look (they are not counted
// against the goal, since the person's wording is not held).
func TestFreshEvasionsScore(t *testing.T) {
	evasions := readLines(t, "fresh-2.txt")
	missed := 0
	for _, l := range evasions {
		if len(Instructions(l)) == 0 {
			missed++
			t.Logf("missed: %q", l)
		}
	}
	rules := readLines(t, "person_rules-2.txt")
	kept := 0
	for _, l := range rules {
		if why := Concealment(l); len(why) == 0 {
			kept++
		} else {
			t.Logf("person's rule held: %q: %v", l, why)
		}
	}
	t.Logf("fresh-2: %d of %d evasions get past Instructions; %d of %d of the person's rules in the same words reach the core", missed, len(evasions), kept, len(rules))
	if missed*20 > len(evasions) {
		t.Errorf("%d of %d fresh evasions missed; the goal is at most 1 in 20", missed, len(evasions))
	}
	if kept*10 < len(rules)*9 {
		t.Errorf("%d of %d of the person's rules kept; the goal is at least 9 in 10", kept, len(rules))
	}
}
