package consolidate

import (
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// computeWith plans one candidate with one model decision about entry
// pref-001.
func computeWith(t *testing.T, files map[string]string, cfg *mdmem.Config, c *mdmem.Candidate, op OpKind) (*Plan, *mdmem.Memory) {
	t.Helper()
	m := loadMem(t, files)
	d := &Decision{Op: op, Target: "pref-001", Candidates: []string{c.ID}, Reason: "model", Snap: map[string]string{"pref-001": m.Find("pref-001").Raw}}
	p, err := Compute(wired(&Input{Mem: m, Cands: []*mdmem.Candidate{c}, Config: cfg, Now: testNow,
		LLMCands: map[string]bool{c.ID: true}, Decisions: []*Decision{d}}))
	if err != nil {
		t.Fatal(err)
	}
	after, _ := applyPlan(t, files, p)
	return p, after
}

// TestModelConfirmedDuplicateSpelledTwoWaysIsMerged: a duplicate the model
// confirms (merge, no text) whose two texts each hold a name or number
// the other lacks ("O+" / "O positive") is merged in the same run: the
// newer wording stays live in the entry, the other goes to the archive
// superseded by it; nothing is held, nothing lost.
func TestModelConfirmedDuplicateSpelledTwoWaysIsMerged(t *testing.T) {
	const entry, dup = "Alex's blood type is O positive", "Alex is O+ blood group"
	for _, tt := range []struct {
		name           string
		created        time.Time
		live, archived string
	}{
		{"newer candidate: its wording stays", testNow, dup, entry},
		{"older candidate: the entry's wording stays", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), entry, dup},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"MEMORY.md": memoryWith("- [pref-001] " + entry + " (user · 2025-06-01)")}
			c := cand(dup, "preference", tt.created)
			p, after := computeWith(t, files, testConfig(), c, OpMerge)
			if p.Count(OpMerge) != 1 || len(p.Held) != 0 {
				t.Fatalf("not merged: %s; held %v", opKinds(p), p.Held)
			}
			e := after.Find("pref-001")
			if e == nil || e.Place != mdmem.PlaceCore || e.Content != tt.live || !containsStr(e.Refs, c.ID) {
				t.Fatalf("entry after the merge: %+v", e)
			}
			old := byText(after, tt.archived)
			if len(old) != 1 || old[0].Place != mdmem.PlaceArchive || old[0].SupersededBy != "pref-001" {
				t.Fatalf("the other wording is not archived superseded by pref-001: %+v", old)
			}
		})
	}
}

// TestAgentCoreCandidateIsJudged: an agent's candidate for the core
// (consolidate.hold_agent_core) reaches the model like any other. A
// duplicate the model confirms folds into the person's entry, which keeps
// its words; a new value the model finds waits in Pending naming the
// entry, so that confirm supersedes it; the person's entry stays live.
func TestAgentCoreCandidateIsJudged(t *testing.T) {
	const entry = "Alex checks personal email twice a day, at lunch and after dinner"
	cfg := testConfig()
	cfg.Consolidate.HoldAgentCore = true
	files := map[string]string{"MEMORY.md": memoryWith("- [pref-001] " + entry + " (user · 2025-06-01)")}

	dup := cand("Alex reads personal email only twice a day: at lunch and after dinner", "preference", testNow)
	p, after := computeWith(t, files, cfg, dup, OpMerge)
	if e := after.Find("pref-001"); p.Count(OpMerge) != 1 || e == nil || e.Content != entry || e.Place != mdmem.PlaceCore || !containsStr(e.Refs, dup.ID) {
		t.Fatalf("duplicate: %s; pref-001 %+v", opKinds(p), e)
	}
	if es := byText(after, dup.Content); len(es) != 0 {
		t.Fatalf("the agent's wording entered the memory: %+v", es)
	}

	upd := cand("Alex checks personal email three times a day", "preference", testNow)
	p, after = computeWith(t, files, cfg, upd, OpSupersede)
	es := byText(after, upd.Content)
	if len(es) != 1 || es[0].Place != mdmem.PlacePending || !strings.Contains(strings.Join(es[0].Notes, "|"), "may update pref-001: the model judged it a new value") {
		t.Fatalf("update: %s; %+v", opKinds(p), es)
	}
	if e := after.Find("pref-001"); e == nil || e.Place != mdmem.PlaceCore {
		t.Fatalf("the person's entry left the core: %+v", e)
	}
}
