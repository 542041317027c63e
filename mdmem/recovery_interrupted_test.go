package mdmem

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// setupPartialCommitUndo: import killed after MEMORY.md; person commit -a
// plus a conflicting own entry in topics/a.md (as in
// TestUndoAfterAPartialCommitTakesItOut).
func setupPartialCommitUndo(t *testing.T) (*Store, string, string) {
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
	must(t, os.WriteFile(s.abs("topics/.a.tmp"), []byte(topic0+"- [fact-002] The person's own note\n"), 0o644))
	must(t, os.Rename(s.abs("topics/.a.tmp"), s.abs("topics/a.md")))
	gitOut(t, s.Dir, "commit", "-qam", "person: commit -a")
	return s, main0, topic0
}

// TestInterruptedUndoOfAPartialCommitIsFinished: the undo's commit fails once (git's index.lock held by a concurrent git
// process, or a kill -9 between applyTxnOn's file replacement and its
// commit). The next recovery must still take the committed half out.
func TestInterruptedUndoOfAPartialCommitIsFinished(t *testing.T) {
	s, main0, _ := setupPartialCommitUndo(t)
	lock := filepath.Join(s.Dir, ".git", "index.lock")
	must(t, os.WriteFile(lock, nil, 0o644))
	if _, err := s.Lock(context.Background()); err == nil {
		t.Fatal("premise: recovery should fail with index.lock held")
	}
	if readOrAbsent(t, s, MainFile) != main0 {
		t.Fatalf("premise: the undo replaced MEMORY.md before its commit failed")
	}
	must(t, os.Remove(lock))
	rec := lockAndRecover(t, s)
	t.Logf("recovered: %q", rec)
	if head := gitOut(t, s.Dir, "show", "HEAD:"+MainFile); strings.Contains(head, "Imported decision") {
		t.Errorf("half the import stays committed (HEAD:MEMORY.md holds dec-001); status %q", gitOut(t, s.Dir, "status", "--porcelain"))
	}
	if st := gitOut(t, s.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("status %q", st)
	}
	he := commitHandEdits(t, s)
	t.Logf("hand edit: %+v\n%s", he, gitOut(t, s.Dir, "log", "-1", "--format=%an %s", "-p"))
}

// TestReaderSeesWhatTheWriterReachesAfterAnInPlaceEdit: a reader during
// the window of TestEditOnOldContentMergesWithTheRest (b.md edited in
// place, so its backup link changed) sees what the writer will reach (the
// write finished, memctl's change merged into b.md). It read the old
// content only from the backup, decided "undo", and showed a.md with
// memctl's new entries beside b.md without memctl's fact-006: a mix.
func TestReaderSeesWhatTheWriterReachesAfterAnInPlaceEdit(t *testing.T) {
	s := typoAndInPlaceEditAfterAKilledImport(t)
	v, err := OpenReadView(s.Dir)
	must(t, err)
	a, _ := v.ReadFile("topics/a.md")
	b, _ := v.ReadFile("topics/b.md")
	v.Close()
	rec := lockAndRecover(t, s)
	t.Logf("recovered: %q", rec)
	da, db := readOrAbsent(t, s, "topics/a.md"), readOrAbsent(t, s, "topics/b.md")
	if string(a) != da || string(b) != db {
		t.Errorf("reader saw a=%q b=%q; the writer reached a=%q b=%q", a, b, da, db)
	}
}

// TestMergedRecoveryWhoseCommitFailsIsFinished: the merging recovery's
// commit fails once (index.lock held) after the merged file is on disk;
// the next run lands the write, and the hand-edit commit holds only the
// person's lines.
func TestMergedRecoveryWhoseCommitFailsIsFinished(t *testing.T) {
	s := typoAndInPlaceEditAfterAKilledImport(t)
	lock := filepath.Join(s.Dir, ".git", "index.lock")
	must(t, os.WriteFile(lock, nil, 0o644))
	if _, err := s.Lock(context.Background()); err == nil {
		t.Fatal("premise")
	}
	t.Logf("b.md after failed recovery: %q", readOrAbsent(t, s, "topics/b.md"))
	must(t, os.Remove(lock))
	rec := lockAndRecover(t, s)
	t.Logf("recovered: %q", rec)
	commitHandEdits(t, s)
	diff := gitOut(t, s.Dir, "show", "HEAD")
	t.Logf("%s", gitOut(t, s.Dir, "log", "--format=%an %s"))
	if strings.Contains(diff, "+- [fact-006]") || strings.Contains(diff, "+- [fact-003]") {
		t.Errorf("hand edit holds memctl's lines:\n%s", diff)
	}
	if st := gitOut(t, s.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("status %q", st)
	}
}

// TestInterruptedLedgerUndoIsFinished: as TestUndoTakesCommittedLedgerLinesOut, but the undo's own commit fails
// once (index.lock held; the same state as a kill -9 inside
// undoCommittedPart's applyTxnOn after the files were replaced).
func TestInterruptedLedgerUndoIsFinished(t *testing.T) {
	ctx := context.Background()
	s, ids := killedConsolidateCommittedByAPerson(t)
	lock := filepath.Join(s.Dir, ".git", "index.lock")
	must(t, os.WriteFile(lock, nil, 0o644))
	if _, err := s.Lock(ctx); err == nil {
		t.Fatal("premise")
	}
	must(t, os.Remove(lock))
	rec := lockAndRecover(t, s)
	t.Logf("recovered: %q; status %q", rec, gitOut(t, s.Dir, "status", "--porcelain"))
	gitOut(t, s.Dir, "checkout", "--", ".") // the person discards what they see as stray changes
	done, err := ReadLedger(s.Dir, ids)
	must(t, err)
	q, _, err := ReadQueue(ctx, s.Dir)
	must(t, err)
	if done[ids[0]] || done[ids[1]] {
		t.Errorf("ledger lists the undone write's candidates as consumed (%v) while %d are queued and never applied", done, len(q))
	}
}

// TestReaderSeesMemctlsPartTakenOutOfAnEdit: while a write that will be
// undone waits for the next writer, a reader sees a file the person
// edited on top of memctl's bytes as the undo will leave it (memctl's
// part taken out, the person's edit kept), not with memctl's entries.
func TestReaderSeesMemctlsPartTakenOutOfAnEdit(t *testing.T) {
	s := editsOnTopAndInConflictAfterAKilledImport(t)
	v, err := OpenReadView(s.Dir)
	must(t, err)
	a, _ := v.ReadFile("topics/a.md")
	b, _ := v.ReadFile("topics/b.md")
	v.Close()
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "undid") {
		t.Fatalf("recovered: %q", rec)
	}
	if da, db := readOrAbsent(t, s, "topics/a.md"), readOrAbsent(t, s, "topics/b.md"); string(a) != da || string(b) != db {
		t.Errorf("reader saw a=%q b=%q; the writer reached a=%q b=%q", a, b, da, db)
	}
}
