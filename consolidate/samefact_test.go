package consolidate

import (
	"testing"

	"github.com/memctl/memctl/mdmem"
)

// TestCompareVerdicts pins the one comparison of "the same fact": which
// pairs are one fact, a new value of the same slot, another thing's
// statement, an addition, or a change rules leave to a model or a person.
func TestCompareVerdicts(t *testing.T) {
	cfg := mdmem.DefaultConfig().Consolidate
	for _, tt := range []struct {
		name, old, newer string
		want             verdict
	}{
		// duplicates: case, punctuation, fillers
		{"the same words up to case and fillers", "The order service uses Redis.", "order service uses redis", factDuplicate},
		{"a filler update marker is no change", "Lena goes to Ashley Down Primary", "Lena now goes to Ashley Down Primary", factDuplicate},
		// a number that is the value: an update
		{"a number of the predicate is a value", "Alex weighs about 74 kg", "Alex weighs about 71 kg", factUpdate},
		{"a percentage is a value", "Alex pays 5% of salary into the workplace pension", "Alex pays 8% of salary into the workplace pension", factUpdate},
		{"a number with its unit is a value", "Broadband is with Virgin Media on the 500 Mb plan", "Broadband is with Virgin Media on the 1 Gig plan now", factUpdate},
		{"an amount with a thousands separator", "The summer holiday budget is 3,000 pounds for the whole family", "The summer holiday budget is 3,500 pounds for the whole family", factUpdate},
		{"two values of one slot", "Lena is 8 years old and in Year 3", "Lena is 9 years old and in Year 4", factUpdate},
		{"a time is a value", "Standup starts at 9:30 every weekday", "Standup starts at 10:00 every weekday", factUpdate},
		{"days of a schedule are a value", "Alex works from the office on Mondays and Thursdays", "Alex works from the office on Tuesdays and Wednesdays", factUpdate},
		{"a part of the day is a value", "The dog walker takes Biscuit out at lunchtime with two other dogs", "The dog walker takes Biscuit out in the morning with two other dogs", factUpdate},
		{"a day in the subject names the thing", "Saturday classes are full until June", "Sunday classes are full until June", factAnother},
		{"a version that is the value", "Example code uses Python 3.11", "Example code uses Python 3.12", factUpdate},
		{"another unit after the same number", "Backups are kept for 7 days", "Backups are kept for 7 weeks", factUpdate},
		// identifiers are never versions
		{"a number in the subject names the customer", "Customer 881 pays by invoice", "Customer 882 pays by card", factAnother},
		{"a room number in the subject", "Meeting room 110 on the third floor has a working projector", "Meeting room 111 on the third floor has a working projector", factAnother},
		{"a ticket number in the subject", "Ticket 4711 is about the login timeout", "Ticket 4712 is about the login timeout", factAnother},
		{"the product's version in the subject", "The Node 18 image has 2 GB of memory", "The Node 20 image has 2 GB of memory", factAnother},
		{"a word of the subject swapped", "Backups of the jackal database are kept for 4339 days", "Backups of the egret database are kept for 4339 days", factAnother},
		// changes rules cannot class
		{"a port in the predicate: a new port or a second one", "The database listens on port 5432", "The database listens on port 6543", factChanged},
		{"a version named as the subject of a default", "Python 3.11 is the default interpreter on CI", "Python 3.12 is the default interpreter on CI", factChanged},
		{"a date in the subject names the thing", "The incident of 2026-01-05 was a full disk", "The incident of 2026-02-07 was a full disk", factAnother},
		{"a date in the predicate: moved, or another day", "The release freeze starts on 2026-01-05", "The release freeze starts on 2026-02-07", factChanged},
		{"a word of the predicate: a new value or a complement", "Visitors are met at the main gate of building 4", "Visitors are met at the side gate of building 4", factChanged},
		{"a negation added", "Backups are encrypted at rest", "Backups are not encrypted at rest", factChanged},
		{"a unit in another case", "The upload limit is 100 MB", "The upload limit is 100 Mb", factChanged},
		{"another symbol", "Run make && make test", "Run make ; make test", factChanged},
		{"the same words in another order are not one fact", "Alice reviews for Bob", "Bob reviews for Alice", factRelated},
		// additions and rewordings
		{"also says it adds", "Lena must not eat kiwi; it gives her a rash", "Lena must not eat mango either; it also gives her a rash", factAdds},
		{"also alone says it adds", "The family dentist is Clifton Dental Care", "The kids' orthodontist is also at Clifton Dental Care", factAdds},
		{"a rewording on the same subject", "Alex's mum Ruth lives in Bath and is 71", "Ruth, Alex's mother, is 71 and lives in Bath", factRelated},
		{"nothing in common", "The family car is a 2019 Skoda Octavia estate", "Alex plays acoustic guitar", factOther},
		// everyday synonyms name the same thing (mdmem/lexicon)
		{"the subject in a synonym: the same statement", "Alex's mum is 71", "Alex's mother is 71", factDuplicate},
		{"the subject in a synonym, a new value", "Alex's mum is 71", "Alex's mother is 72", factUpdate},
		{"the kids in other words, with \"now\": the same statement", "The kids go to Hill Street school", "The children go to Hill Street school now", factDuplicate},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := sameFactTexts(tt.old, tt.newer, cfg.NearDuplicate, cfg.Related)
			if got.v != tt.want {
				t.Errorf("compare(%q, %q) = %v (%s, overlap %.2f), want %v", tt.old, tt.newer, got.v, got.why, got.overlap, tt.want)
			}
		})
	}
}
