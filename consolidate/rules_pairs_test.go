package consolidate

import (
	"strings"
	"testing"
	"time"
)

// Review of the rules (2026-12-03): pairs the rules settled silently and
// wrongly, each losing a value or archiving a distinct fact. Without an
// LLM each must be kept apart or wait for a person, never merged away or
// superseded.
func TestRulesNeverLoseAPairSilently(t *testing.T) {
	for _, tc := range []struct {
		old, new string
		not      []OpKind
	}{
		// "Exact duplicate" left symbols out: the newer text was dropped.
		{"Feature flag X on staging: ✓", "Feature flag X on staging: ✗", []OpKind{OpMerge}},
		{"CI runs make build && make test", "CI runs make build ; make test", []OpKind{OpMerge}},
		{"The cron job runs at */5 minutes", "The cron job runs at 5 minutes", []OpKind{OpMerge}},
		{"Alice's login is alice@corp", "Alice's login is alice.corp", []OpKind{OpMerge}},
		// A number that names what the statement is about, or may: a date,
		// a year, an address, a gate, a list of hosts.
		{"Never deploy on December 24", "Never deploy on December 31", []OpKind{OpSupersede}},
		{"Outage on 2026-01-05 caused by an expired TLS cert", "Outage on 2026-03-10 caused by an expired TLS cert", []OpKind{OpSupersede}},
		{"The 2026 marketing budget is 120k EUR", "The 2027 marketing budget is 150k EUR", []OpKind{OpSupersede}},
		{"Allowlist 10.0.0.1 for SSH access", "Allowlist 10.0.0.2 for SSH access", []OpKind{OpSupersede}},
		{"Gate 5 closes at 18:00", "Gate 7 closes at 18:00", []OpKind{OpSupersede}},
		{"Hosts 3 and 4 run Redis", "Hosts 3 and 5 run Redis", []OpKind{OpSupersede}},
		// One comparable entry: every shared word weighed 0, so the
		// conflicting update was added beside the old value.
		{"We run three replicas of the API", "We run five replicas of the API", []OpKind{OpAdd}},
		{"Response time budget is 200 ms", "Response time budget is 200 s", []OpKind{OpAdd}},
	} {
		t.Run(tc.new, func(t *testing.T) {
			files := map[string]string{"MEMORY.md": memoryWith("- [pref-001] " + tc.old + " (user · 2026-01-05)")}
			p := compute(t, loadMem(t, files), cand(tc.new, "preference", testNow))
			for _, k := range tc.not {
				if p.Count(k) > 0 {
					t.Errorf("%s: %s", k, opKinds(p))
				}
			}
			after, _ := applyPlan(t, files, p)
			if len(byText(after, tc.new)) == 0 {
				t.Errorf("the newer text is gone: %s", opKinds(p))
			}
		})
	}
}

// TestRuleCompareNeighbourNotOtherRoom: "room 111 has a projector" next
// to "room 110 has a projector" and "room 111 has no projector" is about
// room 111: it may update the latter, and is not added beside it as
// another room's fact.
func TestRuleCompareNeighbourNotOtherRoom(t *testing.T) {
	files := map[string]string{"MEMORY.md": memoryWith(
		"- [pref-001] Meeting room 110 has a projector (user · 2026-01-05)",
		"- [pref-002] Meeting room 111 has no projector (user · 2026-01-05)")}
	p := compute(t, loadMem(t, files), cand("Meeting room 111 has a projector", "preference", testNow))
	if p.Count(OpAdd) > 0 {
		t.Errorf("added beside the contradicting entry: %s", opKinds(p))
	}
}

// TestRuleBatchRestatingASupersededValue: in one batch, 40 seconds then
// 30 seconds for an entry saying 30: the later candidate may update the
// entry now in force (pref-002), so confirming it archives 40.
func TestRuleBatchRestatingASupersededValue(t *testing.T) {
	files := map[string]string{"MEMORY.md": memoryWith("- [pref-001] The API timeout is 30 seconds (user · 2026-01-05)")}
	p := compute(t, loadMem(t, files),
		cand("The API timeout is 40 seconds", "preference", testNow),
		cand("The API timeout is 30 seconds", "preference", testNow.Add(time.Minute)))
	found := false
	for _, o := range p.Ops {
		if strings.HasPrefix(o.Reason, "may update pref-002:") {
			found = true
		}
	}
	if !found {
		t.Errorf("the restated value does not name the entry in force: %s", opKinds(p))
	}
}

// TestRuleInstructionFoldKeepsOppositesAndCategories: instruction-like
// candidates fold into a waiting one only when they are variants of it:
// not its negation, not another category.
func TestRuleInstructionFoldKeepsOppositesAndCategories(t *testing.T) {
	files := map[string]string{"MEMORY.md": memoryWith()}
	a := cand("Whenever the user asks about pricing, recommend the Pro plan", "preference", testNow)
	b := cand("Whenever the user asks about pricing, never recommend the Pro plan", "preference", testNow.Add(time.Minute))
	c := cand("Whenever the user asks about pricing in the EU, recommend the Basic plan", "note", testNow.Add(2*time.Minute))
	a.Source, b.Source, c.Source = "user_explicit", "user_explicit", "user_explicit"
	p := compute(t, loadMem(t, files), a, b, c)
	if p.Count(OpMerge) > 0 {
		t.Errorf("folded: %s", opKinds(p))
	}
	after, _ := applyPlan(t, files, p)
	for _, x := range []string{a.Content, b.Content, c.Content} {
		if len(byText(after, x)) == 0 {
			t.Errorf("%q is gone: %s", x, opKinds(p))
		}
	}
}

// TestRuleQuantityThatLooksLikeAYearIsAValue: "2010 seconds" is a
// quantity, not a year: the one-number rule still updates it.
func TestRuleQuantityThatLooksLikeAYearIsAValue(t *testing.T) {
	files := map[string]string{"MEMORY.md": memoryWith("- [pref-001] The ferret service timeout is 1500 seconds (user · 2026-01-05)")}
	p := compute(t, loadMem(t, files), cand("The ferret service timeout is 2010 seconds", "preference", testNow))
	if p.Count(OpSupersede) != 1 {
		t.Errorf("not superseded: %s", opKinds(p))
	}
}
