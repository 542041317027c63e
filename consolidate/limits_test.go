package consolidate

import (
	"fmt"
	"strings"
	"testing"

	"github.com/memctl/memctl/mdmem"
)

// constraintsMemory is a core profile of n constraints of about 120 bytes.
func constraintsMemory(n int) string {
	var b strings.Builder
	b.WriteString("# Core profile\n\n## User preferences\n\n## Project constraints\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "- [cons-%03d] Service %s must never call service %s synchronously on the request path (code review · 2026-01-08)\n", i, word(i), word(i*31+7))
	}
	b.WriteString("\n## Key decisions\n\n## Pending confirmation\n\n# Topic index\n\n# Archive\n")
	return b.String()
}

// instructionCands are n distinct instruction-like candidates.
func instructionCands(n int) []*mdmem.Candidate {
	var cs []*mdmem.Candidate
	for i := 0; i < n; i++ {
		// Distinct payloads: near repeats of one would fold into one entry.
		cs = append(cs, cand(fmt.Sprintf("From now on you %s %s %s %s %s", word(i), word(i*7+1), word(i*13+2), word(i*17+3), word(i*19+4)), "preference", testNow))
	}
	return cs
}

// Finding 10: Pending confirmation is never injected, so it does not count
// against the core limits and never demotes a core entry.
func TestPendingDoesNotDemoteConstraints(t *testing.T) {
	m := loadMem(t, map[string]string{"MEMORY.md": constraintsMemory(8)})
	cfg := testConfig()
	cfg.Consolidate.MaxPending = 400
	p, err := Compute(wired(&Input{Mem: m, Cands: instructionCands(400), Config: cfg, Now: testNow}))
	if err != nil {
		t.Fatal(err)
	}
	if n := p.Count(OpPending); n != 400 {
		t.Fatalf("pending ops %d, want 400", n)
	}
	if n := p.Count(OpDemote); n != 0 {
		t.Fatalf("%d core entries demoted because of Pending confirmation", n)
	}
	after := mdmem.ParseDoc(mdmem.MainFile, p.Files[mdmem.MainFile])
	core := 0
	for _, e := range after.Entries {
		if e.Place == mdmem.PlaceCore && e.Category == "constraint" {
			core++
		}
	}
	if core != 8 {
		t.Fatalf("%d constraints left in the core, want 8", core)
	}
	if CoreLimits(cfg).over(p.CoreAfter) || p.CoreAfter.Bytes > 2000 {
		t.Fatalf("core size %v counts Pending confirmation", p.CoreAfter)
	}
	if len(p.Warnings) != 0 {
		t.Fatalf("warnings: %v", p.Warnings)
	}
	if p.Pending != (PendingCount{Entries: 400, Max: 400}) {
		t.Fatalf("pending count %+v", p.Pending)
	}
}

// CoreSize leaves out exactly the Pending confirmation subsection.
func TestCoreSizeWithoutPending(t *testing.T) {
	base := constraintsMemory(3)
	with := strings.Replace(base, "## Pending confirmation\n", "## Pending confirmation\n- [pref-009] Act as root (user · 2026-01-01 · pending user confirmation)\n", 1)
	a := CoreSize(mdmem.ParseDoc(mdmem.MainFile, []byte(base)))
	b := CoreSize(mdmem.ParseDoc(mdmem.MainFile, []byte(with)))
	if a != b {
		t.Fatalf("core size %v with a pending entry, %v without", b, a)
	}
	full := base[:strings.Index(base, "# Topic index")]
	noPending := strings.Replace(full, "## Pending confirmation\n\n", "", 1)
	if a.Bytes != len(noPending) {
		t.Fatalf("core bytes %d, want %d", a.Bytes, len(noPending))
	}
}

// Finding 10: Pending confirmation holds at most consolidate.max_pending
// entries; the other candidates stay queued with the reason, not counted
// as failed attempts.
func TestPendingCapHoldsTheRest(t *testing.T) {
	cfg := testConfig()
	cfg.Consolidate.MaxPending = 5
	files := map[string]string{"MEMORY.md": constraintsMemory(2)}
	m := loadMem(t, files)
	cs := instructionCands(12)
	p, err := Compute(wired(&Input{Mem: m, Cands: cs, Config: cfg, Now: testNow}))
	if err != nil {
		t.Fatal(err)
	}
	if n := p.Count(OpPending); n != 5 {
		t.Fatalf("pending ops %d, want 5", n)
	}
	if len(p.Held) != 7 || len(p.Consumed) != 5 {
		t.Fatalf("held %d consumed %d, want 7 and 5", len(p.Held), len(p.Consumed))
	}
	for _, h := range p.Held {
		if h.Kind != HoldPendingFull || h.Reason != "pending confirmation is full (5): confirm or reject some" || h.Attempts != 0 {
			t.Fatalf("hold %+v", h)
		}
	}
	if p.Pending != (PendingCount{Entries: 5, Max: 5, Waiting: 7}) {
		t.Fatalf("pending count %+v", p.Pending)
	}
	if !strings.Contains(p.Pending.String(), "full: 7 candidates wait in the queue") {
		t.Fatalf("report %q", p.Pending)
	}
	// The next run, with Pending still full, holds the rest again.
	files["MEMORY.md"] = string(p.Files[mdmem.MainFile])
	m = loadMem(t, files)
	var rest []*mdmem.Candidate
	for _, c := range cs {
		if !contains(p.Consumed, c.ID) {
			rest = append(rest, c)
		}
	}
	p2, err := Compute(wired(&Input{Mem: m, Cands: rest, Config: cfg, Now: testNow}))
	if err != nil {
		t.Fatal(err)
	}
	if len(p2.Files) != 0 || len(p2.Held) != 7 || p2.Pending.Entries != 5 {
		t.Fatalf("second run: files %d held %d pending %+v", len(p2.Files), len(p2.Held), p2.Pending)
	}
}

// A candidate whose LLM attempts run out goes to Pending confirmation only
// when there is room; otherwise it stays queued, its count kept.
func TestExpiredCandidateWaitsForRoom(t *testing.T) {
	cfg := testConfig()
	cfg.Consolidate.MaxPending = 1
	src := strings.Replace(constraintsMemory(1), "## Pending confirmation\n", "## Pending confirmation\n- [pref-009] Act as root (user · 2026-01-01 · pending user confirmation)\n", 1)
	m := loadMem(t, map[string]string{"MEMORY.md": src})
	c := cand("Service alpha uses the blue deployment slot", "fact", testNow)
	p, err := Compute(wired(&Input{Mem: m, Cands: []*mdmem.Candidate{c}, Config: cfg, Now: testNow,
		LLMCands: map[string]bool{c.ID: true}, Attempts: map[string]int{c.ID: cfg.Consolidate.MaxAttempts - 1}}))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Held) != 1 || p.Held[0].Kind != HoldPendingFull || p.Count(OpPending) != 0 || len(p.Consumed) != 0 {
		t.Fatalf("held %+v pending %d consumed %v", p.Held, p.Count(OpPending), p.Consumed)
	}
	if !strings.Contains(p.Held[0].Reason, "pending confirmation is full (1)") {
		t.Fatalf("reason %q", p.Held[0].Reason)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
