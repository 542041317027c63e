package mdmem

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/memctl/memctl/templates"
)

// Recovery after a killed write and a person's edits: the cases a review
// of the recovery code found (2026-12-03). Each test fails on the code
// before its fix.

// insertInto returns MEMORY.md src with the entries inserted where memctl
// puts them.
func insertInto(t *testing.T, src string, es ...*Entry) string {
	t.Helper()
	m := memoryFrom(t, map[string]string{MainFile: src})
	ed := m.Edit()
	for _, e := range es {
		must(t, ed.Insert(e, Target{Place: PlaceCore}))
	}
	out, err := ed.Changed()
	must(t, err)
	return string(out[MainFile])
}

func lintOf(t *testing.T, main string) []Problem {
	return memoryFrom(t, map[string]string{MainFile: main}).Lint()
}

// TestMergeKeepsEntriesInTheirSection: a line merge must not slide
// memctl's entry under a heading the person added, removed or rewrote at
// the same spot; such a merge is a conflict (or comes out lint-clean with
// the entry where memctl put it).
func TestMergeKeepsEntriesInTheirSection(t *testing.T) {
	withDec1 := insertInto(t, templates.Embedded("MEMORY.md"), &Entry{ID: "dec-001", Category: "decision", Content: "Use Go", Source: "test"})
	dec2 := &Entry{ID: "dec-002", Category: "decision", Content: "Use SQLite", Source: "test"}
	pref1 := &Entry{ID: "pref-001", Category: "preference", Content: "Short answers", Source: "test"}
	tmpl := templates.Embedded("MEMORY.md")
	for _, tc := range []struct {
		name, old, new, theirs, id string
	}{
		{"a new subsection where memctl appends", withDec1, insertInto(t, withDec1, dec2),
			strings.Replace(withDec1, "- [dec-001] Use Go (test ·)\n", "- [dec-001] Use Go (test ·)\n- [dec-050] Ship weekly\n\n## Team\nWe are three people.\n", 1), "dec-002"},
		{"the empty heading memctl inserts under removed", tmpl, insertInto(t, tmpl, pref1),
			strings.Replace(tmpl, "## User preferences\n\n", "", 1), "pref-001"},
		{"the person's version in CRLF", withDec1, insertInto(t, withDec1, dec2),
			strings.ReplaceAll(strings.Replace(withDec1, "## Pending confirmation\n", "## Pending confirmation\n- [todo-050] Check this\n", 1), "\n", "\r\n"), "dec-002"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			merged, ok := mergeOnto(MainFile, []byte(tc.old), []byte(tc.new), []byte(tc.theirs))
			if !ok {
				return // a conflict: recovery undoes the write, nothing is misplaced
			}
			if ps := lintOf(t, string(merged)); len(ps) != 0 {
				t.Errorf("merged MEMORY.md lints: %v\n%s", ps, merged)
			}
			for _, e := range memoryFrom(t, map[string]string{MainFile: string(merged)}).Main.Entries {
				if e.ID == tc.id && e.Place != PlaceCore {
					t.Errorf("%s landed in %s (%q)", tc.id, e.Place, e.Section)
				}
			}
		})
	}
}

// TestRecoveryNeverMovesAnEntryToAPersonsSection: an import is killed
// after its first file; the person adds a subsection to MEMORY.md at the
// spot memctl appends to and commits everything; recovery must not file
// the imported decision under the person's heading.
func TestRecoveryNeverMovesAnEntryToAPersonsSection(t *testing.T) {
	s := newStore(t)
	old := insertInto(t, readOrAbsent(t, s, MainFile), &Entry{ID: "dec-001", Category: "decision", Content: "Use Go", Source: "test"})
	writeFiles(t, s, map[string][]byte{MainFile: []byte(old), StatePath: []byte("{\n  \"last_id\": {\n    \"dec\": 1\n  }\n}\n")})
	mem := insertInto(t, old, &Entry{ID: "dec-002", Category: "decision", Content: "Use SQLite", Source: "test"})
	if !crashingWrite(t, s, FailTxnHalfFiles, map[string][]byte{MainFile: []byte(mem), StatePath: []byte("{\n  \"last_id\": {\n    \"dec\": 2\n  }\n}\n")}) {
		t.Fatal("no crash")
	}
	if readOrAbsent(t, s, MainFile) != old {
		t.Fatal("premise: MEMORY.md should still be old")
	}
	theirs := strings.Replace(old, "- [dec-001] Use Go (test ·)\n", "- [dec-001] Use Go (test ·)\n- [dec-050] Ship weekly\n\n## Team\nWe are three people.\n", 1)
	must(t, os.WriteFile(s.abs(MainFile), []byte(theirs), 0o644))
	gitOut(t, s.Dir, "commit", "-qam", "person: commit everything")
	rec := lockAndRecover(t, s)
	m, err := Load(context.Background(), s.Dir)
	must(t, err)
	if ps := m.Lint(); len(ps) != 0 {
		t.Errorf("lint after recovery (%q): %v\nHEAD:MEMORY.md:\n%s", rec, ps, gitOut(t, s.Dir, "show", "HEAD:"+MainFile))
	}
}

// TestTypoFixOfTheOldTextIsNotOnTop: a write rewriting fact-001 (10 → 30
// seconds) is killed before it replaced the topic file; the person fixes
// a typo in the old text. That edit is as near to the old text as to
// memctl's, so it is not taken for an edit on top: the write is undone
// and its candidate applies again later, rather than the stale text
// being committed over memctl's update as a hand edit.
func TestTypoFixOfTheOldTextIsNotOnTop(t *testing.T) {
	s := newStore(t)
	main0 := readOrAbsent(t, s, MainFile)
	writeFiles(t, s, map[string][]byte{"topics/a.md": []byte("# A\n- [fact-001] The API timeout is 10 secnods\n- [fact-002] Two\n")})
	files := map[string][]byte{
		MainFile:      []byte(strings.Replace(main0, "## Pending confirmation\n", "## Pending confirmation\n- [todo-001] Check the timeout\n", 1)),
		"topics/a.md": []byte("# A\n- [fact-001] The API timeout is 30 seconds\n- [fact-002] Two\n"),
	}
	if !crashingWrite(t, s, FailTxnHalfFiles, files) {
		t.Fatal("no crash")
	}
	if !strings.Contains(readOrAbsent(t, s, "topics/a.md"), "10 secnods") {
		t.Fatal("premise: a.md not yet written")
	}
	// An editor that saves by rename.
	must(t, os.WriteFile(s.abs("topics/.a.md.swp"), []byte("# A\n- [fact-001] The API timeout is 10 seconds\n- [fact-002] Two\n"), 0o644))
	must(t, os.Rename(s.abs("topics/.a.md.swp"), s.abs("topics/a.md")))
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "undid") {
		t.Fatalf("recovered: %q, want the write undone", rec)
	}
	if got := readOrAbsent(t, s, MainFile); got != main0 {
		t.Errorf("MEMORY.md = %q, want the old content back", got)
	}
}

// TestPersonCommitOfATypoFixOnOldTextIsNotLanded: the same edit, committed
// with memctl's half write (git commit -a) and with the duplicate memctl
// archived deleted too: the topic file does not hold memctl's update, so
// the write is not counted as landed.
func TestPersonCommitOfATypoFixOnOldTextIsNotLanded(t *testing.T) {
	s := newStore(t)
	main0 := readOrAbsent(t, s, MainFile)
	writeFiles(t, s, map[string][]byte{"topics/a.md": []byte("# A\n- [fact-001] The API timeout is 10 secnods\n- [fact-002] API timeout: 10 s\n")})
	files := map[string][]byte{
		MainFile:      []byte(strings.Replace(main0, "# Archive\n", "# Archive\n- [fact-002] API timeout: 10 s\n", 1)),
		"topics/a.md": []byte("# A\n- [fact-001] The API timeout is 30 seconds\n"),
	}
	if !crashingWrite(t, s, FailTxnHalfFiles, files) {
		t.Fatal("no crash")
	}
	must(t, os.WriteFile(s.abs("topics/.tmp"), []byte("# A\n- [fact-001] The API timeout is 10 seconds\n"), 0o644))
	must(t, os.Rename(s.abs("topics/.tmp"), s.abs("topics/a.md")))
	gitOut(t, s.Dir, "commit", "-qam", "person: commit everything")
	if !holdsChanges("topics/a.md", []byte("# A\n- [fact-001] The API timeout is 10 secnods\n- [fact-002] API timeout: 10 s\n"), files["topics/a.md"], []byte("# A\n- [fact-001] The API timeout is 10 seconds\n")) == false {
		t.Error("holdsChanges takes a typo fix of the old text for memctl's rewrite")
	}
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || strings.Contains(rec[0], "committed by a person") {
		t.Errorf("recovered: %q: the write was counted as landed, memctl's update never applied", rec)
	}
}

// TestTypoFixInMemctlsEntryCountsAsOnTop: a write adding one entry is
// killed with its file written; the person fixes a typo in that entry.
// That is an edit on top of memctl's: the write lands as memctl's commit
// and the fix as the person's, rather than the write being undone and
// memctl's entry committed as the person's hand edit.
func TestTypoFixInMemctlsEntryCountsAsOnTop(t *testing.T) {
	s := newStore(t)
	writeFiles(t, s, map[string][]byte{"topics/a.md": []byte("# A\n- [fact-001] One\n")})
	files := map[string][]byte{"topics/a.md": []byte("# A\n- [fact-001] One\n- [fact-002] The deploy runs on Fridya at noon\n")}
	if !crashingWrite(t, s, FailTxnFiles, files) {
		t.Fatal("no crash")
	}
	must(t, os.WriteFile(s.abs("topics/a.md"), []byte("# A\n- [fact-001] One\n- [fact-002] The deploy runs on Friday at noon\n"), 0o644))
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "finished") {
		t.Fatalf("recovered: %q, want the write finished", rec)
	}
	if he := commitHandEdits(t, s); he.Commit == "" {
		t.Fatal("the person's fix was not committed")
	}
	diff := gitOut(t, s.Dir, "show", "--format=", "HEAD")
	if !strings.Contains(diff, "-- [fact-002] The deploy runs on Fridya") || !strings.Contains(diff, "+- [fact-002] The deploy runs on Friday") {
		t.Errorf("the hand-edit commit should hold only the typo fix:\n%s", diff)
	}
}

// TestEditOnOldContentMergesWithTheRest: a write is killed with its first
// file written; the person fixes a typo in one of memctl's new entries
// there and edits the second file on its old content. memctl's change
// merges with that edit, so the write lands whole and each hand-edit
// line is the person's (before, the write was undone and memctl's
// untouched entries went into the person's commit).
func TestEditOnOldContentMergesWithTheRest(t *testing.T) {
	s := typoAndInPlaceEditAfterAKilledImport(t)
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "finished") || !strings.Contains(rec[0], "merged into topics/b.md") {
		t.Fatalf("recovered: %q, want the write finished with b.md merged", rec)
	}
	if got, want := readOrAbsent(t, s, "topics/b.md"), "# B\n- [fact-002] Two, mine\n- [fact-006] Six imported\n"; got != want {
		t.Errorf("topics/b.md = %q, want %q", got, want)
	}
	commitHandEdits(t, s)
	diff := gitOut(t, s.Dir, "show", "--format=%an", "HEAD")
	if strings.Contains(diff, "+- [fact-003]") || strings.Contains(diff, "+- [fact-006]") || !strings.Contains(diff, "+- [fact-002] Two, mine") {
		t.Errorf("the hand-edit commit should hold only the person's changes:\n%s", diff)
	}
	if st := gitOut(t, s.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("status %q", st)
	}
}

// TestUndoTakesMemctlsPartOutOfACreatedFile: an import creating
// topics/go.md is killed with its files written; the person appends an
// entry of their own to it and commits an unrelated file, so the write is
// undone. memctl's entries are taken out of go.md (the person's stays):
// the hand-edit commit holds only what the person wrote. (The topic index
// line was memctl's too, so lint then reports go.md as not listed, as for
// any topic file a person creates without one.)
func TestUndoTakesMemctlsPartOutOfACreatedFile(t *testing.T) {
	s := newStore(t)
	main0 := readOrAbsent(t, s, MainFile)
	writeFiles(t, s, map[string][]byte{"topics/b.md": []byte("# B\n- [fact-001] One\n")})
	files := map[string][]byte{
		MainFile:       []byte(strings.Replace(main0, "# Topic index\n", "# Topic index\n- Go → topics/go.md\n", 1)),
		"topics/go.md": []byte("# Go\n\n- [fact-002] Go 1.22 is used, imported\n- [fact-003] Modules are vendored, imported\n"),
	}
	if !crashingWrite(t, s, FailTxnFiles, files) {
		t.Fatal("no crash")
	}
	must(t, os.WriteFile(s.abs("topics/go.md"), append(append([]byte{}, files["topics/go.md"]...), "- [fact-050] Mine\n"...), 0o644))
	must(t, os.WriteFile(s.abs("topics/b.md"), []byte("# B\n- [fact-001] One, edited\n"), 0o644))
	gitOut(t, s.Dir, "commit", "-qm", "person: b", "--", "topics/b.md")
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "undid") || !strings.Contains(rec[0], "topics/go.md") {
		t.Fatalf("recovered: %q", rec)
	}
	if got := readOrAbsent(t, s, "topics/go.md"); got != "- [fact-050] Mine\n" {
		t.Errorf("topics/go.md = %q, want only the person's entry", got)
	}
	commitHandEdits(t, s)
	if diff := gitOut(t, s.Dir, "show", "--format=", "HEAD"); strings.Contains(diff, "imported") {
		t.Errorf("the hand-edit commit holds memctl's undone entries:\n%s", diff)
	}
}

// TestUndoTakesCommittedLedgerLinesOut: a consolidate transaction
// consuming two candidates is killed with its files written; the person
// discards memctl's topic file bytes, rewrites fact-001 their own way and
// commits everything, memctl's new ledger included. Their rewrite
// conflicts with memctl's, so the write is undone; its ledger lines come
// out in a commit of memctl's, so the candidates, still queued, are
// applied by the next run rather than dropped as consumed.
func TestUndoTakesCommittedLedgerLinesOut(t *testing.T) {
	ctx := context.Background()
	s, ids := killedConsolidateCommittedByAPerson(t)
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "undid") || !strings.Contains(rec[0], "taken out in a commit of memctl's") {
		t.Fatalf("recovered: %q", rec)
	}
	done, err := ReadLedger(s.Dir, ids)
	must(t, err)
	if done[ids[0]] || done[ids[1]] {
		t.Errorf("the ledger still records the undone write's candidates as consumed: %v", done)
	}
	if q, _, err := ReadQueue(ctx, s.Dir); err != nil || len(q) != 2 {
		t.Errorf("queue: %d candidates (%v), want both still queued", len(q), err)
	}
	if author := gitOut(t, s.Dir, "log", "-1", "--format=%an"); author == "Test Person" {
		t.Errorf("the ledger undo was committed as the person")
	}
	if st := gitOut(t, s.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("status %q", st)
	}
}

// TestUndoAfterAPartialCommitTakesItOut: an import is killed after its
// first file (MEMORY.md); the person commits everything (git commit -a),
// memctl's half-written MEMORY.md among it, and gives an entry of their
// own, in the topic file memctl had not written yet, the id memctl's
// import uses there. That conflict undoes the import; the part the
// person committed comes out too (a commit of memctl's), so the import
// is all or nothing and running it again does not duplicate it.
func TestUndoAfterAPartialCommitTakesItOut(t *testing.T) {
	s := newStore(t)
	main0 := readOrAbsent(t, s, MainFile)
	topic0 := "# A\n- [fact-001] One\n"
	writeFiles(t, s, map[string][]byte{"topics/a.md": []byte(topic0)})
	files := map[string][]byte{
		MainFile:      []byte(strings.Replace(main0, "## Key decisions\n", "## Key decisions\n- [dec-001] Imported decision\n", 1)),
		"topics/a.md": []byte(topic0 + "- [fact-002] Imported fact\n"),
	}
	if !crashingWrite(t, s, FailTxnHalfFiles, files) {
		t.Fatal("no crash")
	}
	if readOrAbsent(t, s, MainFile) != string(files[MainFile]) || readOrAbsent(t, s, "topics/a.md") != topic0 {
		t.Fatal("premise: MEMORY.md written, topics/a.md not yet")
	}
	must(t, os.WriteFile(s.abs("topics/.a.tmp"), []byte(topic0+"- [fact-002] The person's own note\n"), 0o644))
	must(t, os.Rename(s.abs("topics/.a.tmp"), s.abs("topics/a.md")))
	gitOut(t, s.Dir, "commit", "-qam", "person: commit -a")
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "undid") {
		t.Fatalf("recovered: %q, want the import undone", rec)
	}
	head := gitOut(t, s.Dir, "show", "HEAD:"+MainFile)
	if strings.Contains(head, "Imported decision") {
		t.Errorf("half the import stays committed: HEAD:MEMORY.md holds dec-001\n%s", gitOut(t, s.Dir, "log", "--format=%an: %s"))
	}
	if got := gitOut(t, s.Dir, "show", "HEAD:topics/a.md"); !strings.Contains(got, "The person's own note") {
		t.Errorf("the person's commit of a.md was changed: %q", got)
	}
	if author := gitOut(t, s.Dir, "log", "-1", "--format=%an"); author == "Test Person" {
		t.Errorf("the undo was committed as the person")
	}
	if st := gitOut(t, s.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("status %q", st)
	}
}

// TestForgetMatchesWholeWords: forget's matching of queued candidates and
// transcript text finds the forgotten text as whole words only.
func TestForgetMatchesWholeWords(t *testing.T) {
	for _, tc := range []struct {
		s, sub string
		want   int
	}{
		{"uses go", "uses go", 0},
		{"alice uses google meet", "uses go", -1},
		{"the cli uses go 1.26", "uses go", 8},
		{"reuses go and uses go", "uses go", 14},
		{"café uses go", "uses go", 6},
		{"", "go", -1},
	} {
		if got := indexWords(tc.s, tc.sub); got != tc.want {
			t.Errorf("indexWords(%q, %q) = %d, want %d", tc.s, tc.sub, got, tc.want)
		}
	}
	got := string(replaceWords([]byte("Alice Uses Google; Bob Uses Go daily. Uses Go"), "Uses Go", "[forgotten]"))
	if want := "Alice Uses Google; Bob [forgotten] daily. [forgotten]"; got != want {
		t.Errorf("replaceWords = %q, want %q", got, want)
	}
}

// killedConsolidateCommittedByAPerson kills a consolidate transaction
// consuming two candidates (fact-001 rewritten, fact-003 added, a new
// ledger) after its files; the person then discards memctl's topic file
// bytes, rewrites fact-001 their own way and commits everything, memctl's
// ledger lines included. It returns the store and the candidate ids.
func killedConsolidateCommittedByAPerson(t *testing.T) (*Store, []string) {
	ctx := context.Background()
	s := newStore(t)
	writeFiles(t, s, map[string][]byte{"topics/a.md": []byte("# A\n- [fact-001] The timeout is 10 seconds\n- [fact-002] Two\n")})
	ids, err := Enqueue(ctx, s.Dir, []*Candidate{{Content: "The timeout is 30 seconds", Category: "fact"}, {Content: "Three", Category: "fact"}}, s.now())
	must(t, err)
	crashAt(s, FailTxnFiles)
	func() {
		defer func() {
			s.Getenv, s.Exit = nil, nil
			if r := recover(); r == nil {
				t.Fatal("no crash")
			}
		}()
		unlock, err := s.Lock(ctx)
		must(t, err)
		defer unlock()
		tx, err := s.Begin(ctx)
		must(t, err)
		must(t, tx.PutOnDisk(ctx, "topics/a.md", []byte("# A\n- [fact-001] The timeout is 30 seconds\n- [fact-002] Two\n- [fact-003] Three\n")))
		must(t, tx.PutOnDisk(ctx, StatePath, []byte("{\n  \"last_id\": {\n    \"fact\": 3\n  }\n}\n")))
		tx.Consume(ids[0], "updated fact-001")
		tx.Consume(ids[1], "added fact-003")
		_, err = tx.Commit(ctx, CommitMessage{Subject: "consolidate: crash test"})
		must(t, err)
	}()
	gitOut(t, s.Dir, "checkout", "--", ".")
	must(t, os.WriteFile(s.abs("topics/a.md"), []byte("# A\n- [fact-001] The timeout is 20 seconds\n- [fact-002] Two\n"), 0o644))
	gitOut(t, s.Dir, "add", "-A")
	gitOut(t, s.Dir, "commit", "-qm", "person: my timeout")
	return s, ids
}

// typoAndInPlaceEditAfterAKilledImport kills an import after its first
// file (three new entries in topics/a.md, one in topics/b.md, not yet
// written); the person then fixes a typo in one of memctl's new entries
// and edits b.md in place on its old content (so its backup link changes
// too).
func typoAndInPlaceEditAfterAKilledImport(t *testing.T) *Store {
	s := newStore(t)
	writeFiles(t, s, map[string][]byte{"topics/a.md": []byte("# A\n- [fact-001] One\n"), "topics/b.md": []byte("# B\n- [fact-002] Two\n")})
	files := map[string][]byte{
		"topics/a.md": []byte("# A\n- [fact-001] One\n- [fact-003] Three imported\n- [fact-004] Four imported\n- [fact-005] Fiev imported\n"),
		"topics/b.md": []byte("# B\n- [fact-002] Two\n- [fact-006] Six imported\n"),
	}
	if !crashingWrite(t, s, FailTxnHalfFiles, files) {
		t.Fatal("no crash")
	}
	must(t, os.WriteFile(s.abs("topics/a.md"), []byte("# A\n- [fact-001] One\n- [fact-003] Three imported\n- [fact-004] Four imported\n- [fact-005] Five imported\n"), 0o644))
	must(t, os.WriteFile(s.abs("topics/b.md"), []byte("# B\n- [fact-002] Two, mine\n"), 0o644))
	return s
}
