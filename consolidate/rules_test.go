package consolidate

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/memctl/memctl/mdmem"
)

// emptyMemory is a memory with no entries.
const emptyMemory = "# Core profile\n\n## User preferences\n\n## Project constraints\n\n## Key decisions\n\n## Pending confirmation\n\n# Topic index\n\n# Archive\n"

// memoryWith returns MEMORY.md with the given lines in its preferences.
func memoryWith(lines ...string) string {
	return strings.Replace(emptyMemory, "## User preferences\n", "## User preferences\n"+strings.Join(lines, "\n")+"\n", 1)
}

// applyPlan returns the memory after the plan, read back from its files.
func applyPlan(t *testing.T, files map[string]string, p *Plan) (*mdmem.Memory, map[string]string) {
	t.Helper()
	next := map[string]string{}
	for k, v := range files {
		next[k] = v
	}
	for k, v := range p.Files {
		next[k] = string(v)
	}
	return loadMem(t, next), next
}

// byText returns the entries whose content is text.
func byText(m *mdmem.Memory, text string) []*mdmem.Entry {
	var out []*mdmem.Entry
	for _, e := range m.Entries() {
		if e.Content == text {
			out = append(out, e)
		}
	}
	return out
}

func opKinds(p *Plan) string {
	var s []string
	for _, o := range p.Ops {
		s = append(s, string(o.Kind)+":"+o.Reason)
	}
	return strings.Join(s, "; ")
}

// symbolPairs differ only in a symbol that carries meaning, or in one
// letter next to one. Tokenised without the symbols they are equal.
var symbolPairs = [][2]string{
	{"Retry limit must be >= 3", "Retry limit must be <= 3"},
	{"Retry limit must be >= 3", "Retry limit must be > 3"},
	{"Timeout must be < 30 seconds", "Timeout must be > 30 seconds"},
	{"Status must be == 200", "Status must be != 200"},
	{"Assignment uses = not ==", "Assignment uses == not ="},
	{"Use + operator for string concatenation", "Use - operator for string concatenation"},
	{"Prefers C for systems code", "Prefers C++ for systems code"},
	{"Use C# for the build scripts", "Use C for the build scripts"},
	{"Prefers C# over Java", "Prefers C++ over Java"},
	{"The monthly budget is $100", "The monthly budget is €100"},
	{"The monthly budget is £100", "The monthly budget is $100"},
	{"Prices are quoted in $", "Prices are quoted in €"},
	{"Growth target is 5%", "Growth target is $5"},
	{"Discount is 10% for members", "Discount is 10 for members"},
	{"Score adjustment is +1", "Score adjustment is -1"},
	{"Post release notes in #general", "Post release notes in general"},
	{"Tolerance is ±5", "Tolerance is 5"},
	{"Alarm below -5 degrees", "Alarm below 5 degrees"},
	{"Use x86 builds; C++ only", "Use x86 builds; C only"},
}

// nearTail makes a pair long enough to be near duplicates (Jaccard at or
// above the default near_duplicate), so the near-duplicate stage is
// tested as well as the exact one.
const nearTail = " in every repository the platform team owns across all regions and all environments we run"

// TestSymbolsKeptInEquality: texts that differ in a symbol are
// neither exact nor near duplicates: the second text is never merged
// away, it stays live (added, or superseding when only a value changed).
func TestSymbolsKeptInEquality(t *testing.T) {
	for _, tail := range []string{"", nearTail} {
		for _, pair := range symbolPairs {
			a, b := pair[0]+tail, pair[1]+tail
			t.Run(b, func(t *testing.T) {
				files := map[string]string{"MEMORY.md": memoryWith("- [pref-001] " + a + " (user · 2026-01-05)")}
				m := loadMem(t, files)
				p := compute(t, m, cand(b, "preference", testNow))
				if p.Count(OpMerge) != 0 || p.Count(OpNoop) != 0 {
					t.Fatalf("merged: %s", opKinds(p))
				}
				after, _ := applyPlan(t, files, p)
				es := byText(after, b)
				if len(es) != 1 || !live(es[0].Place) {
					t.Fatalf("%q not live after %s", b, opKinds(p))
				}
			})
		}
	}
}

func jaccard(a, b *item) float64 {
	x := newIndex(1)
	x.addItem(b)
	_, js := x.best(a, 0, 1, func(*item) bool { return true }, nil)
	if len(js) == 0 {
		return 0
	}
	return js[0]
}

// TestEqualTextsStillMerge: texts equal up to case, spacing,
// final punctuation and the spelling of an operator are duplicates; the
// entry's date moves to the candidate's.
func TestEqualTextsStillMerge(t *testing.T) {
	for _, pair := range [][2]string{
		{"Retry limit must be >= 3", "retry LIMIT must be  >= 3."},
		{"Retry limit must be >= 3", "Retry limit must be ≥ 3"},
		{"Prefers C++ for systems code", "prefers c++ for systems code!"},
		{"The monthly budget is $100", "The monthly budget is $100."},
		{"Use C# for the build scripts", "Use C#, for the build scripts"},
		{"Use tabs, not spaces", "use tabs; not spaces"},
	} {
		t.Run(pair[1], func(t *testing.T) {
			files := map[string]string{"MEMORY.md": memoryWith("- [pref-001] " + pair[0] + " (user · 2026-01-05)")}
			p := compute(t, loadMem(t, files), cand(pair[1], "preference", testNow))
			if p.Count(OpMerge) != 1 {
				t.Fatalf("not merged: %s", opKinds(p))
			}
			after, _ := applyPlan(t, files, p)
			if e := after.Find("pref-001"); e == nil || !e.Updated.Equal(testNow) {
				t.Fatalf("date not moved: %+v", e)
			}
		})
	}
}

// TestNoMergeAcrossCategories: a preference never merges into a
// fact with the same text, exactly or nearly.
func TestNoMergeAcrossCategories(t *testing.T) {
	for _, text := range []string{"Dark mode in all editors", "Dark mode in all editors" + nearTail} {
		for _, cand2 := range []string{text, text + "."} {
			files := map[string]string{
				"MEMORY.md":      emptyMemory,
				"topics/fact.md": "# Facts\n\n- [fact-001] " + text + " (user · 2026-01-05)\n",
			}
			p := compute(t, loadMem(t, files), cand(cand2, "preference", testNow))
			if p.Count(OpMerge) != 0 || p.Count(OpAdd) != 1 {
				t.Fatalf("%q: %s", cand2, opKinds(p))
			}
		}
	}
}

const gateOld = "Parcels for the office are dropped at the main gate by the courier before noon on every weekday"

// TestNearDuplicateWordChange: a near duplicate that changes a
// content word is not merged and does not refresh the old entry's date:
// without an LLM it goes to Pending confirmation naming the entry
// (confirm supersedes it); with one, it goes to the model. A near
// duplicate that differs only in filler words merges without moving the
// date.
func TestNearDuplicateWordChange(t *testing.T) {
	gateNew := strings.Replace(gateOld, "main gate", "side gate", 1)
	files := map[string]string{"MEMORY.md": memoryWith("- [pref-001] " + gateOld + " (user · 2026-01-05)")}
	m := loadMem(t, files)
	if j := jaccard(newItem(gateNew, "preference", nil), newItem(gateOld, "preference", nil)); j < testConfig().Consolidate.NearDuplicate {
		t.Fatalf("similarity %.2f: the test needs near duplicates", j)
	}
	p := compute(t, m, cand(gateNew, "preference", testNow))
	if p.Count(OpConflict) != 1 || p.Count(OpMerge) != 0 {
		t.Fatalf("ops: %s", opKinds(p))
	}
	after, _ := applyPlan(t, files, p)
	old := after.Find("pref-001")
	if old == nil || old.Place != mdmem.PlaceCore || !old.Updated.IsZero() {
		t.Fatalf("old entry changed: %+v", old)
	}
	es := byText(after, gateNew)
	if len(es) != 1 || es[0].Place != mdmem.PlacePending || !strings.Contains(strings.Join(es[0].Notes, "|"), "may update pref-001: nearly the same text") {
		t.Fatalf("new text not pending: %+v", es)
	}
	if _, ok := isConflictNote(es[0].Notes[1]); !ok {
		t.Fatalf("note %q is not a conflict note confirm understands", es[0].Notes[1])
	}

	// With an LLM configured, the candidate goes to the model with the entry.
	c := cand(gateNew, "preference", testNow)
	cl := Triage(wired(&Input{Mem: m, Cands: []*mdmem.Candidate{c}, Config: testConfig(), Now: testNow}))
	if len(cl) != 1 || len(cl[0].Entries) == 0 || cl[0].Entries[0].ID != "pref-001" {
		t.Fatalf("not sent to the LLM with pref-001: %+v", cl)
	}

	// Only filler words differ: a duplicate, merged; the newer wording
	// survives, with its date.
	filler := strings.Replace(strings.Replace(gateOld, "the office", "office", 1), "are dropped", "dropped", 1)
	fc := cand(filler, "preference", testNow)
	p = compute(t, m, fc)
	if p.Count(OpMerge) != 1 {
		t.Fatalf("filler-only change not merged: %s", opKinds(p))
	}
	after, _ = applyPlan(t, files, p)
	if e := after.Find("pref-001"); e == nil || e.Content != filler || !e.Updated.Equal(testNow) || !containsStr(e.Refs, fc.ID) {
		t.Fatalf("merged entry: %+v", e)
	}
	// An older restatement in other filler words leaves the newer text.
	p = compute(t, m, cand(filler, "preference", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	after, _ = applyPlan(t, files, p)
	if e := after.Find("pref-001"); p.Count(OpMerge) != 1 || e == nil || e.Content != gateOld || !e.Updated.IsZero() {
		t.Fatalf("older restatement: %s; %+v", opKinds(p), e)
	}
}

// TestOneWordChangeLLMMerge: with an LLM, the one-word change goes to the
// model with its entry. A model that calls it a duplicate (merge or noop,
// no text) is refused (swappedWords): whichever wording survived, the
// other value would be gone without an archive record; the candidate is
// held for the next run, the entry unchanged. A supersede archives the old
// value.
func TestOneWordChangeLLMMerge(t *testing.T) {
	gateNew := strings.Replace(gateOld, "main gate", "side gate", 1)
	for _, op := range []OpKind{OpMerge, OpNoop, OpSupersede} {
		t.Run(string(op), func(t *testing.T) {
			files := map[string]string{"MEMORY.md": memoryWith("- [pref-001] " + gateOld + " (user · 2026-01-05)")}
			m := loadMem(t, files)
			c := cand(gateNew, "preference", testNow)
			d := &Decision{Op: op, Target: "pref-001", Candidates: []string{c.ID}, Reason: "model", Snap: map[string]string{"pref-001": m.Find("pref-001").Raw}}
			p, err := Compute(wired(&Input{Mem: m, Cands: []*mdmem.Candidate{c}, Config: testConfig(), Now: testNow,
				LLMCands: map[string]bool{c.ID: true}, Decisions: []*Decision{d}}))
			if err != nil {
				t.Fatal(err)
			}
			after, _ := applyPlan(t, files, p)
			if op != OpSupersede {
				if e := after.Find("pref-001"); e == nil || e.Content != gateOld || e.Place != mdmem.PlaceCore || len(p.Held) != 1 || p.Held[0].Candidate != c.ID {
					t.Fatalf("%s: %s; held %v; pref-001 %+v", op, opKinds(p), p.Held, e)
				}
				return
			}
			var live []*mdmem.Entry
			for _, e := range byText(after, gateNew) {
				if e.Place == mdmem.PlaceCore {
					live = append(live, e)
				}
			}
			if len(live) != 1 {
				t.Fatalf("%s: the newer text is not live: %s", op, opKinds(p))
			}
			if old := byText(after, gateOld); len(old) != 0 && old[0].Place != mdmem.PlaceArchive {
				t.Fatalf("%s: the old text is still live next to the new one", op)
			}
		})
	}
}

// TestIdentifierNumbersDoNotSupersede: a statement that repeats
// an entry with one other number supersedes it only when the number is
// the value; a number that names a thing makes a new entry.
func TestIdentifierNumbersDoNotSupersede(t *testing.T) {
	tests := []struct {
		old, new  string
		supersede bool
	}{
		{"Meeting room 110 on the third floor has a working projector", "Meeting room 111 on the third floor has a working projector", false},
		{"ordered note number 007", "ordered note number 008", false},
		{"The build host 12 runs the nightly jobs", "The build host 14 runs the nightly jobs", false},
		{"Step 3 of the release is the schema migration", "Step 4 of the release is the schema migration", false},
		{"Ticket 4711 is about the login timeout", "Ticket 4712 is about the login timeout", false},
		{"The order service listens on port 8080", "The order service listens on port 8081", false},
		{"Issue #12 tracks the flaky checkout test", "Issue #13 tracks the flaky checkout test", false},
		{"The agent config lives in folder 007 of the share", "The agent config lives in folder 008 of the share", false},
		{"The staging box is web-03 behind the proxy", "The staging box is web-04 behind the proxy", false},
		{"Example code uses Python 3.11 everywhere", "Example code uses Python 3.12 everywhere", true},
		{"The retry limit is 3 attempts per call", "The retry limit is 5 attempts per call", true},
		{"Alex has 27 days of annual leave", "Alex has 30 days of annual leave", true},
		{"Standup starts at 9:30 every weekday", "Standup starts at 10:00 every weekday", true},
		{"Lena is 8 years old and in Year 3", "Lena is 9 years old and in Year 4", true},
		{"The review is at 9:30 in room 110 every Monday", "The review is at 10:00 in room 111 every Monday", false},
	}
	for _, tt := range tests {
		t.Run(tt.new, func(t *testing.T) {
			files := map[string]string{"MEMORY.md": memoryWith("- [pref-001] " + tt.old + " (user · 2026-01-05)")}
			p := compute(t, loadMem(t, files), cand(tt.new, "preference", testNow))
			after, _ := applyPlan(t, files, p)
			old := after.Find("pref-001")
			if got := old.Place == mdmem.PlaceArchive; got != tt.supersede {
				t.Fatalf("superseded %v, want %v: %s", got, tt.supersede, opKinds(p))
			}
			if es := byText(after, tt.new); len(es) != 1 || !live(es[0].Place) {
				t.Fatalf("new text not live: %s", opKinds(p))
			}
		})
	}
}

// TestRoomsAndNotesStayLive: the two cases. Ten rooms
// and three new ones: nothing archived. Twenty numbered notes in one
// batch: twenty live entries.
func TestRoomsAndNotesStayLive(t *testing.T) {
	var lines []string
	for i := 101; i <= 110; i++ {
		lines = append(lines, fmt.Sprintf("- [fact-%03d] Meeting room %d on the third floor has a working projector (user · 2026-01-05)", i-100, i))
	}
	files := map[string]string{"MEMORY.md": emptyMemory, "topics/fact.md": "# Facts\n\n" + strings.Join(lines, "\n") + "\n"}
	var cs []*mdmem.Candidate
	for i := 111; i <= 113; i++ {
		cs = append(cs, cand(fmt.Sprintf("Meeting room %d on the third floor has a working projector", i), "fact", testNow))
	}
	for i := 0; i < 20; i++ {
		cs = append(cs, cand(fmt.Sprintf("ordered note number %03d", i), "note", testNow))
	}
	p := compute(t, loadMem(t, files), cs...)
	if n := p.Count(OpSupersede) + p.Count(OpArchive); n != 0 || len(p.Held) != 0 {
		t.Fatalf("archived %d, held %v: %s", n, p.Held, opKinds(p))
	}
	after, _ := applyPlan(t, files, p)
	liveN := 0
	for _, e := range after.Entries() {
		if live(e.Place) {
			liveN++
		}
	}
	if liveN != 10+3+20 {
		t.Fatalf("%d live entries, want 33", liveN)
	}
}

// TestArchiveCapBindsRules: value changes chained in one batch
// archive at most max_archive_share of the batch; the rest is held with
// the reason and applied, in input order, by the next runs: the last
// value wins.
func TestArchiveCapBindsRules(t *testing.T) {
	files := map[string]string{"MEMORY.md": emptyMemory}
	var cs []*mdmem.Candidate
	for i := 1; i <= 20; i++ {
		cs = append(cs, cand(fmt.Sprintf("The retry limit is %d attempts per call", i), "preference", testNow))
	}
	capN := ArchiveCap(testConfig(), len(cs))
	for run := 1; len(cs) > 0; run++ {
		if run > 20 {
			t.Fatal("no progress")
		}
		m := loadMem(t, files)
		p := compute(t, m, cs...)
		archived := p.Count(OpSupersede) + p.Count(OpArchive)
		if lim := max(ArchiveCap(testConfig(), len(m.Entries())), capN); archived > lim {
			t.Fatalf("run %d archived %d, over the cap %d", run, archived, lim)
		}
		held := map[string]bool{}
		for _, h := range p.Held {
			if h.Kind != HoldLimit || !strings.Contains(h.Reason, "archive limit") {
				t.Fatalf("hold %+v", h)
			}
			held[h.Candidate] = true
		}
		if run == 1 && len(held) == 0 {
			t.Fatal("the cap did not bind: nothing held")
		}
		var rest []*mdmem.Candidate
		for i, c := range cs {
			if held[c.ID] {
				rest = append(rest, c)
			} else if len(rest) > 0 {
				t.Fatalf("run %d: candidate %d applied after a held one", run, i)
			}
		}
		_, files = applyPlan(t, files, p)
		cs = rest
	}
	m := loadMem(t, files)
	for _, e := range m.Entries() {
		if live(e.Place) != (e.Content == "The retry limit is 20 attempts per call") {
			t.Errorf("%s %q in %s", e.ID, e.Content, e.Place)
		}
	}
}

// TestLedgerPathOfSequencedIDs: the ledger file is still named
// after the candidate's month, for old and new ids.
func TestLedgerPathOfSequencedIDs(t *testing.T) {
	now := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	for _, id := range []string{mdmem.NewCandidateID(now, 0), mdmem.NewCandidateID(now, 99999999), "c20260701T000000.000000-abcd1234"} {
		if got := mdmem.LedgerPath(id); got != mdmem.LedgerDir+"/2026-07.log" {
			t.Errorf("mdmem.LedgerPath(%q) = %q", id, got)
		}
	}
}

// TestTokensKeepSymbols: the tokeniser behind equality and
// similarity keeps the symbols that carry meaning.
func TestTokensKeepSymbols(t *testing.T) {
	for in, want := range map[string]string{
		"Retry limit must be >= 3.":     "retry limit must be >= 3",
		"Retry limit must be ≥ 3!":      "retry limit must be >= 3",
		"x != y; a == b; c < d":         "x != y a == b c < d",
		"Prefers C++ (not C#), not C":   "prefers c++ not c# not c",
		"Budget: $100 or €90 or £80":    "budget $ 100 or € 90 or £ 80",
		"Growth 5% -- and -5 or +1":     "growth 5 % - and -5 or + 1",
		"Use - operator, --force":       "use - operator --force",
		"order-service v3.11 at 10:30":  "order-service v3.11 at 10:30",
		"Issue #12 in #general, wow!!!": "issue # 12 in # general wow",
	} {
		if got := strings.Join(tokens(in), " "); got != want {
			t.Errorf("tokens(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRulesRelatedGoesPending: without an LLM, a candidate that retrieval
// finds closely related to an entry of its category, which no rule
// settles, waits in Pending confirmation as "may update <id>" (confirm
// supersedes the entry); an unrelated one is added.
func TestRulesRelatedGoesPending(t *testing.T) {
	files := map[string]string{"MEMORY.md": memoryWith(
		"- [pref-001] Alex works from the office on Mondays and Thursdays (user · 2025-06-01)",
		"- [pref-002] Alex drinks oat milk flat whites with no sugar (user · 2025-06-01)",
		"- [pref-003] The review is at 9:30 in room 110 every Monday (user · 2025-06-01)")}
	m := loadMem(t, files)
	upd := cand("Alex goes into the office on Tuesdays and Wednesdays now", "preference", testNow)
	mixed := cand("The review is at 10:00 in room 111 every Monday", "preference", testNow)
	other := cand("Alex prefers window seats on trains", "preference", testNow)
	p := compute(t, m, upd, mixed, other)
	after, _ := applyPlan(t, files, p)
	for _, c := range []struct {
		c    *mdmem.Candidate
		note string
	}{{upd, "may update pref-001: nearly the same text"}, {mixed, "may update pref-003: nearly the same text"}} {
		es := byText(after, c.c.Content)
		if len(es) != 1 || es[0].Place != mdmem.PlacePending || !strings.Contains(strings.Join(es[0].Notes, "|"), c.note) {
			t.Fatalf("%q: not pending with %q: %s", c.c.Content, c.note, opKinds(p))
		}
		if id, ok := isConflictNote(es[0].Notes[1]); !ok || id != strings.Fields(c.note)[2][:8] {
			t.Fatalf("note %q names %q for confirm", es[0].Notes[1], id)
		}
	}
	if es := byText(after, other.Content); len(es) != 1 || es[0].Place != mdmem.PlaceCore {
		t.Fatalf("unrelated candidate not added: %s", opKinds(p))
	}
	for _, id := range []string{"pref-001", "pref-002", "pref-003"} {
		if e := after.Find(id); e == nil || e.Place != mdmem.PlaceCore {
			t.Fatalf("%s moved: %s", id, opKinds(p))
		}
	}
}
