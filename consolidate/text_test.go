package consolidate

import (
	"strings"
	"testing"
)

// TestInventedFacts: a rewrite may reword, but every name, number and date
// it states must come from its sources, the first word of a sentence
// included (unless it is a common sentence opener).
func TestInventedFacts(t *testing.T) {
	sources := []string{
		"the order service uses memcached for its cache layer now",
		"The order service uses Redis for its cache layer (dec-001)",
		"Deploys happen on Tuesdays; the user prefers tabs. Python 3.12 in CI",
	}
	tests := []struct {
		text string
		want string // invented facts, comma-separated; "" = accepted
	}{
		// Accepted: rewording, openers, facts from the sources in any case.
		{"The order service uses Memcached for its cache layer", ""},
		{"Order service now uses memcached instead of Redis", ""},
		{"Now the order service uses Memcached.", ""},
		{"Deploys happen on Tuesdays. The user prefers tabs.", ""},
		{"Always use tabs; deploys happen on tuesdays", ""},
		{"Tuesdays are deploy days", ""},
		{"Memcached replaced Redis as the order cache", ""},
		{"CI uses Python 3.12", ""},
		{"It uses Redis: the order service, per dec-001", ""},
		{"Don't use Redis for the order cache", ""},
		{"Redis. Memcached. Tuesdays!", ""},
		// Rejected: names and numbers at the start of a sentence too.
		{"Alice prefers tabs", "alice"},
		{"The user prefers tabs. Bob agreed.", "bob"},
		{"Deploys happen on Tuesdays; Kubernetes runs them", "kubernetes"},
		{"Zorblax runs the order service", "zorblax"},
		{"2019 was when the order service moved to Memcached", "2019"},
		{"The order service uses Memcached since 2019-03-04", "2019-03-04"},
		{"CI uses Python 3.13", "3.13"},
		{"The order service uses Memcached, says Carol", "carol"},
		{"The order service uses PostgreSQL", "postgresql"},
		{"Friday deploys are forbidden", "friday"},
		{"Memcached: Stockholm region only", "stockholm"},
	}
	for _, tt := range tests {
		got := strings.Join(inventedFacts(tt.text, sources), ",")
		if got != tt.want {
			t.Errorf("inventedFacts(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestCheckTextRejectsInventedOpener: the LLM output check holds a
// rewrite whose first word is an invented name.
func TestCheckTextRejectsInventedOpener(t *testing.T) {
	p := newPlanner(wired(&Input{Mem: loadMem(t, map[string]string{"MEMORY.md": baseMemory}), Config: testConfig(), Now: testNow}))
	if err := p.checkText("Alice deploys on Tuesdays", []string{"the team deploys on tuesdays"}); err == nil || !strings.Contains(err.Error(), "alice") {
		t.Fatalf("err %v", err)
	}
	if err := p.checkText("The team deploys on Tuesdays", []string{"the team deploys on tuesdays"}); err != nil {
		t.Fatal(err)
	}
}
