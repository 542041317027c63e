package mdmem

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// crash is what a failpoint raises in these tests: the writer stops there,
// as kill -9 would stop it (its flock is released by the unwinding, as
// the kernel releases a dead process's).
type crash struct{ point string }

// crashAt makes s stop at the named failpoint.
func crashAt(s *Store, point string) {
	s.Getenv = func(k string) string {
		if k == FailpointEnv {
			return point
		}
		return ""
	}
	s.Exit = func(int) { panic(crash{point}) }
}

// crashingWrite runs a locked Write that stops at point; it reports
// whether it did stop there.
func crashingWrite(t *testing.T, s *Store, point string, files map[string][]byte) (crashed bool) {
	t.Helper()
	crashAt(s, point)
	defer func() {
		s.Getenv, s.Exit = nil, nil
		if r := recover(); r != nil {
			if _, ok := r.(crash); !ok {
				panic(r)
			}
			crashed = true
		}
	}()
	unlock, err := s.Lock(context.Background())
	must(t, err)
	defer unlock()
	_, err = s.Write(context.Background(), files, CommitMessage{Subject: "import: crash test"})
	must(t, err)
	return false
}

func readOrAbsent(t *testing.T, s *Store, rel string) string {
	t.Helper()
	b, err := os.ReadFile(s.abs(rel))
	if errors.Is(err, os.ErrNotExist) {
		return "<absent>"
	}
	must(t, err)
	return string(b)
}

func lockAndRecover(t *testing.T, s *Store) []string {
	t.Helper()
	s.Recovered = nil
	unlock, err := s.Lock(context.Background())
	must(t, err)
	must(t, unlock())
	return s.Recovered
}

var crashFiles = map[string][]byte{
	MainFile:      []byte("# Core profile\n## Key decisions\n- [dec-001] Crash test decision\n"),
	"topics/a.md": []byte("# A\n- [fact-001] Crash test fact\n"),
}

// landedPoints are the failpoints after the ref moved: the write took
// effect and recovery finishes it. Before them it did not happen.
var landedPoints = map[string]bool{FailTxnCommitted: true, FailTxnHalfFiles: true, FailTxnFiles: true, FailTxnIndexed: true}

// TestTxnCrashAtEveryPointIsDecidedByTheRef: a write killed at any
// failpoint either did not happen (the ref never moved: the files, the
// index and HEAD are as before, and the next run says "interrupted before
// it took effect") or is finished whole by the next writer (one commit,
// the files as committed, clean status, "finished"); never a mix, and the
// message says which.
func TestTxnCrashAtEveryPointIsDecidedByTheRef(t *testing.T) {
	for _, point := range []string{FailTxnStaged, FailTxnJournaled, FailTxnCommitted, FailTxnHalfFiles, FailTxnFiles, FailTxnIndexed} {
		t.Run(point, func(t *testing.T) {
			s := newStore(t)
			before := gitOut(t, s.Dir, "rev-parse", "HEAD")
			if !crashingWrite(t, s, point, crashFiles) {
				t.Fatalf("did not crash at %s", point)
			}
			rec := strings.Join(lockAndRecover(t, s), "\n")
			if !landedPoints[point] {
				if got := readOrAbsent(t, s, "topics/a.md"); got != "<absent>" {
					t.Fatalf("topics/a.md = %q after a crash before the ref moved", got)
				}
				if head := gitOut(t, s.Dir, "rev-parse", "HEAD"); head != before {
					t.Fatalf("HEAD moved to %s", head)
				}
				if point == FailTxnJournaled && !strings.Contains(rec, "interrupted before it took effect") {
					t.Errorf("recovered %q, want it to say the write did not take effect", rec)
				}
				if strings.Contains(rec, "finished") {
					t.Errorf("recovered %q: says finished for a write that did not happen", rec)
				}
			} else {
				for p, want := range crashFiles {
					if got := readOrAbsent(t, s, p); got != string(want) {
						t.Errorf("%s = %q, want %q (recovered: %q)", p, got, want, rec)
					}
				}
				if n := gitOut(t, s.Dir, "log", "--oneline", "--grep", "crash test"); strings.Count(n, "\n") != 0 || n == "" {
					t.Errorf("commits: %q", n)
				}
				if !strings.Contains(rec, "finished") {
					t.Errorf("recovered %q, want it to say it finished the write", rec)
				}
			}
			if st := gitOut(t, s.Dir, "status", "--porcelain"); st != "" {
				t.Errorf("status %q (recovered %q)", st, rec)
			}
			if j, err := readJournalIn(s.Dir, journalName); j != nil || err != nil {
				t.Errorf("journal left: %v %v", j, err)
			}
		})
	}
}

// twoFactsThenCrash commits topics/a.md with two facts, then kills a
// write changing fact-001 right after its ref moved.
func twoFactsThenCrash(t *testing.T) *Store {
	s := newStore(t)
	writeFiles(t, s, map[string][]byte{"topics/a.md": []byte("# A\n- [fact-001] The timeout is 10 seconds\n- [fact-003] Three\n- [fact-002] Two\n")})
	if !crashingWrite(t, s, FailTxnCommitted, map[string][]byte{"topics/a.md": []byte("# A\n- [fact-001] The timeout is 30 seconds\n- [fact-003] Three\n- [fact-002] Two\n")}) {
		t.Fatal("no crash")
	}
	return s
}

// TestRecoveryDecidesEachFileByHash pins the roll-forward cases: a file
// holding the old blob gets the new one; one holding the new blob is
// left; a person's edit of another entry is merged entry by entry; a
// person's edit of the same entry is refused, changing nothing.
func TestRecoveryDecidesEachFileByHash(t *testing.T) {
	const newA = "# A\n- [fact-001] The timeout is 30 seconds\n- [fact-003] Three\n- [fact-002] Two\n"
	for _, tc := range []struct {
		name    string
		edit    string // the person's bytes of topics/a.md before recovery ("" = none)
		want    string // topics/a.md after recovery
		refused bool
	}{
		{name: "old blob gets the new one", want: newA},
		{name: "new blob is left", edit: newA, want: newA},
		{name: "an edit of another entry is merged", edit: "# A\n- [fact-001] The timeout is 10 seconds\n- [fact-003] Three\n- [fact-002] Two, edited\n",
			want: "# A\n- [fact-001] The timeout is 30 seconds\n- [fact-003] Three\n- [fact-002] Two, edited\n"},
		{name: "an edit of the same entry is refused", edit: "# A\n- [fact-001] The timeout is 12 seconds\n- [fact-003] Three\n- [fact-002] Two\n",
			want: "# A\n- [fact-001] The timeout is 12 seconds\n- [fact-003] Three\n- [fact-002] Two\n", refused: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := twoFactsThenCrash(t)
			if tc.edit != "" {
				must(t, os.WriteFile(s.abs("topics/a.md"), []byte(tc.edit), 0o644))
			}
			s.Recovered = nil
			unlock, err := s.Lock(context.Background())
			if tc.refused {
				if !errors.Is(err, ErrEditedSince) || !strings.Contains(err.Error(), "topics/a.md") {
					t.Fatalf("Lock = %v, want it to refuse naming topics/a.md", err)
				}
				if j, _ := readJournalIn(s.Dir, journalName); j == nil {
					t.Error("the journal is gone after a refusal")
				}
			} else {
				must(t, err)
				must(t, unlock())
			}
			if got := readOrAbsent(t, s, "topics/a.md"); got != tc.want {
				t.Errorf("topics/a.md = %q, want %q", got, tc.want)
			}
			if got := gitOut(t, s.Dir, "show", "HEAD:topics/a.md"); got+"\n" != newA {
				t.Errorf("HEAD:topics/a.md = %q", got)
			}
		})
	}
}

// TestAnEditOfAFileTheWriteCreatedMerges (soak seed 610009): an import
// killed after writing a topic file it created; a person adds an entry to
// that file. The roll forward merges from an empty base and keeps it.
func TestAnEditOfAFileTheWriteCreatedMerges(t *testing.T) {
	s := newStore(t)
	created := "# B\n- [fact-001] Imported one\n"
	if !crashingWrite(t, s, FailTxnFiles, map[string][]byte{"topics/b.md": []byte(created)}) {
		t.Fatal("no crash")
	}
	mine := created + "- [fact-009] Mine\n"
	must(t, os.WriteFile(s.abs("topics/b.md"), []byte(mine), 0o644))
	rec := strings.Join(lockAndRecover(t, s), "\n")
	if got := readOrAbsent(t, s, "topics/b.md"); got != mine {
		t.Errorf("topics/b.md = %q (%q)", got, rec)
	}
	if got := gitOut(t, s.Dir, "show", "HEAD:topics/b.md"); got+"\n" != created {
		t.Errorf("HEAD:topics/b.md = %q", got)
	}
}

// TestRecoverSettlesAnEditThatDoesNotMerge: `memctl recover --keep-edits`
// keeps the person's version (their hand edit, committed by the next
// write); --discard-edits puts memctl's committed version back and saves
// theirs.
func TestRecoverSettlesAnEditThatDoesNotMerge(t *testing.T) {
	const mine = "# A\n- [fact-001] The timeout is 12 seconds\n- [fact-003] Three\n- [fact-002] Two\n"
	for _, choice := range []RecoverChoice{KeepEdits, DiscardEdits} {
		s := twoFactsThenCrash(t)
		must(t, os.WriteFile(s.abs("topics/a.md"), []byte(mine), 0o644))
		notes, err := Recover(context.Background(), s, choice)
		must(t, err)
		got := readOrAbsent(t, s, "topics/a.md")
		switch choice {
		case KeepEdits:
			if got != mine {
				t.Errorf("keep: topics/a.md = %q", got)
			}
		case DiscardEdits:
			if !strings.Contains(got, "30 seconds") {
				t.Errorf("discard: topics/a.md = %q", got)
			}
			ents, _ := os.ReadDir(s.abs(RescueDir))
			if len(ents) != 1 {
				t.Fatalf("rescued: %v", ents)
			}
			if b, _ := os.ReadFile(filepath.Join(s.abs(RescueDir), ents[0].Name())); string(b) != mine {
				t.Errorf("rescued copy = %q", b)
			}
		}
		if j, _ := readJournalIn(s.Dir, journalName); j != nil {
			t.Errorf("journal left after %v: %q", choice, notes)
		}
		// The index holds HEAD's blob (soak seeds 610015, 610017: it kept
		// the blob from before the crash, a staged revert).
		st := gitOut(t, s.Dir, "status", "--porcelain")
		if want := map[RecoverChoice]string{KeepEdits: "M topics/a.md", DiscardEdits: ""}[choice]; st != want {
			t.Errorf("%v: status %q, want %q", choice, st, want)
		}
	}
}

// TestDiscardEditsSettlesAConflictingCommit (soak seed 600004, a hang):
// after a write killed right after its commit, a person edits the entry it
// changed and commits everything (git commit -a); the commits conflict,
// so every writer refuses. --discard-edits puts memctl's version back in
// a commit on top, saves the person's, and ends.
func TestDiscardEditsSettlesAConflictingCommit(t *testing.T) {
	s := twoFactsThenCrash(t)
	const mine = "# A\n- [fact-001] The timeout is 12 seconds\n- [fact-003] Three\n- [fact-002] Two\n"
	must(t, os.WriteFile(s.abs("topics/a.md"), []byte(mine), 0o644))
	gitOut(t, s.Dir, "commit", "-qam", "person: my timeout")
	s.Recovered = nil
	if _, err := s.Lock(context.Background()); !errors.Is(err, ErrEditedSince) {
		t.Fatalf("Lock = %v, want a refusal", err)
	}
	notes, err := Recover(context.Background(), s, DiscardEdits)
	must(t, err)
	if got := gitOut(t, s.Dir, "show", "HEAD:topics/a.md"); !strings.Contains(got, "30 seconds") {
		t.Errorf("HEAD:topics/a.md = %q (%q)", got, notes)
	}
	if got := readOrAbsent(t, s, "topics/a.md"); !strings.Contains(got, "30 seconds") {
		t.Errorf("topics/a.md = %q", got)
	}
	if st := gitOut(t, s.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("status %q", st)
	}
	if j, _ := readJournalIn(s.Dir, journalName); j != nil {
		t.Errorf("journal left: %q", notes)
	}
}

// TestPersonCommitAllAfterACrashIsReappliedOnTop: a write killed right
// after its ref moved leaves the old files; `git commit -a` then commits
// those old bytes, taking memctl's change back without meaning to. The
// next writer commits the change again on top, and says so.
func TestPersonCommitAllAfterACrashIsReappliedOnTop(t *testing.T) {
	s := twoFactsThenCrash(t)
	must(t, os.WriteFile(filepath.Join(s.Dir, "notes.txt"), []byte("x\n"), 0o644))
	gitOut(t, s.Dir, "add", "notes.txt")
	gitOut(t, s.Dir, "commit", "-qam", "person: notes")
	rec := strings.Join(lockAndRecover(t, s), "\n")
	if got := gitOut(t, s.Dir, "show", "HEAD:topics/a.md"); !strings.Contains(got, "30 seconds") {
		t.Errorf("HEAD:topics/a.md = %q (recovered %q)", got, rec)
	}
	if got := readOrAbsent(t, s, "topics/a.md"); !strings.Contains(got, "30 seconds") {
		t.Errorf("topics/a.md = %q", got)
	}
	if !strings.Contains(rec, "committed it again on top") {
		t.Errorf("recovered %q", rec)
	}
	if st := gitOut(t, s.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("status %q", st)
	}
}

// TestBranchMovedOffTheCommitIsReportedNotUndone: a person who resets
// the branch off memctl's commit before the next run gets their branch
// as they left it, and the message says the write took effect and was
// moved off.
func TestBranchMovedOffTheCommitIsReportedNotUndone(t *testing.T) {
	s := twoFactsThenCrash(t)
	gitOut(t, s.Dir, "reset", "-q", "--hard", "HEAD~1")
	rec := strings.Join(lockAndRecover(t, s), "\n")
	if !strings.Contains(rec, "moved main off it") {
		t.Errorf("recovered %q", rec)
	}
	if got := readOrAbsent(t, s, "topics/a.md"); !strings.Contains(got, "10 seconds") {
		t.Errorf("topics/a.md = %q", got)
	}
}

// TestReadersReadTheCommittedTreeWhileAJournalIsPresent: between the
// ref's move and the files' update a reader sees HEAD's content, never
// the old files.
func TestReadersReadTheCommittedTreeWhileAJournalIsPresent(t *testing.T) {
	s := twoFactsThenCrash(t)
	if got := readOrAbsent(t, s, "topics/a.md"); !strings.Contains(got, "10 seconds") {
		t.Fatalf("the crash left %q", got)
	}
	m, err := Load(context.Background(), s.Dir)
	must(t, err)
	if e := m.Find("fact-001"); e == nil || !strings.Contains(e.Content, "30 seconds") {
		t.Errorf("reader sees %+v", e)
	}
}

// TestForgetInterruptedBeforeItTookEffectSaysSo is the example:
// a forget killed before its ref moved did not happen, and the next run
// says so instead of "finished"; run again, it forgets.
func TestForgetInterruptedBeforeItTookEffectSaysSo(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	writeFiles(t, s, map[string][]byte{"topics/a.md": []byte("# A\n- [fact-001] My card is 4111\n- [fact-002] Two\n")})
	crashAt(s, FailTxnStaged)
	func() {
		defer func() {
			s.Getenv, s.Exit = nil, nil
			if r := recover(); r == nil {
				t.Fatal("no crash")
			}
		}()
		_, _ = Forget(ctx, s, []string{"fact-001"}, "pii", ForgetOptions{})
	}()
	rec := strings.Join(lockAndRecover(t, s), "\n")
	if strings.Contains(rec, "finished") {
		t.Errorf("recovered %q after a forget that never took effect", rec)
	}
	m, err := Load(ctx, s.Dir)
	must(t, err)
	if m.Find("fact-001") == nil {
		t.Fatal("fact-001 is gone although the forget never took effect")
	}
	crashAt(s, FailTxnJournaled)
	func() {
		defer func() {
			s.Getenv, s.Exit = nil, nil
			if r := recover(); r == nil {
				t.Fatal("no crash")
			}
		}()
		_, _ = Forget(ctx, s, []string{"fact-001"}, "pii", ForgetOptions{})
	}()
	rec = strings.Join(lockAndRecover(t, s), "\n")
	if !strings.Contains(rec, `"forget fact-001" was interrupted before it took effect`) {
		t.Errorf("recovered %q", rec)
	}
	if _, err := Forget(ctx, s, []string{"fact-001"}, "pii", ForgetOptions{}); err != nil {
		t.Fatal(err)
	}
	m, err = Load(ctx, s.Dir)
	must(t, err)
	if m.Find("fact-001") != nil {
		t.Error("fact-001 live after the forget ran again")
	}
}

// TestForgetInterruptedAfterItsCommitIsFinishedWithItsCleanup: the
// cleanup outside git (the queue) is in the forget's journal, so the next
// run makes it.
func TestForgetInterruptedAfterItsCommitIsFinishedWithItsCleanup(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	writeFiles(t, s, map[string][]byte{"topics/a.md": []byte("# A\n- [fact-001] My card is 4111\n")})
	_, err := Enqueue(ctx, s.Dir, []*Candidate{{Content: "My card is 4111", Category: "fact"}}, s.now())
	must(t, err)
	crashAt(s, FailTxnIndexed)
	func() {
		defer func() {
			s.Getenv, s.Exit = nil, nil
			if r := recover(); r == nil {
				t.Fatal("no crash")
			}
		}()
		_, _ = Forget(ctx, s, []string{"fact-001"}, "pii", ForgetOptions{})
	}()
	rec := strings.Join(lockAndRecover(t, s), "\n")
	if !strings.Contains(rec, `finished "forget fact-001"`) {
		t.Errorf("recovered %q", rec)
	}
	if ents, _ := os.ReadDir(s.abs(QueueDir)); len(ents) > 0 {
		for _, e := range ents {
			if e.Type().IsRegular() {
				t.Errorf("queue still holds %s", e.Name())
			}
		}
	}
}

// TestTxnRefusesStalePlans: a file changed since it was planned on, or a
// moved HEAD, makes Commit refuse without writing anything.
func TestTxnRefusesStalePlans(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	unlock, err := s.Lock(ctx)
	must(t, err)
	defer unlock()
	cur := []byte(readOrAbsent(t, s, MainFile))
	tx, err := s.Begin(ctx)
	must(t, err)
	must(t, tx.Put(ctx, MainFile, cur, []byte("new\n")))
	must(t, os.WriteFile(s.abs(MainFile), append(cur, "- edit\n"...), 0o644))
	_, err = tx.Commit(ctx, CommitMessage{Subject: "x"})
	var se *StaleError
	if !errors.As(err, &se) || !errors.Is(err, ErrStale) || len(se.Paths) != 1 {
		t.Fatalf("Commit = %v, want a StaleError on MEMORY.md", err)
	}
	if got := readOrAbsent(t, s, MainFile); got != string(cur)+"- edit\n" {
		t.Errorf("MEMORY.md = %q", got)
	}
	must(t, os.WriteFile(s.abs(MainFile), cur, 0o644))
	tx, err = s.Begin(ctx)
	must(t, err)
	must(t, tx.Put(ctx, "topics/b.md", nil, []byte("# B\n")))
	must(t, os.WriteFile(filepath.Join(s.Dir, "other.txt"), []byte("x"), 0o644))
	gitOut(t, s.Dir, "add", "other.txt")
	gitOut(t, s.Dir, "commit", "-qm", "person")
	if _, err = tx.Commit(ctx, CommitMessage{Subject: "x"}); !errors.As(err, &se) || se.Head == "" {
		t.Fatalf("Commit after HEAD moved = %v", err)
	}
	if got := readOrAbsent(t, s, "topics/b.md"); got != "<absent>" {
		t.Errorf("topics/b.md written: %q", got)
	}
	if j, err := readJournalIn(s.Dir, journalName); j != nil || err != nil {
		t.Errorf("journal left: %v %v", j, err)
	}
}

// TestTxnRefusesCacheAndQueuePaths: git-ignored working data is never
// committed.
func TestTxnRefusesCacheAndQueuePaths(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	unlock, err := s.Lock(ctx)
	must(t, err)
	defer unlock()
	tx, err := s.Begin(ctx)
	must(t, err)
	defer tx.Abort()
	for _, p := range []string{".memctl/cache/x", ".memctl/queue/c1.json"} {
		if err := tx.Put(ctx, p, nil, []byte("x")); err == nil {
			t.Errorf("Put(%s) accepted", p)
		}
	}
}

// writeFiles commits files as a memctl write would.
func writeFiles(t *testing.T, s *Store, files map[string][]byte) {
	t.Helper()
	unlock, err := s.Lock(context.Background())
	must(t, err)
	defer unlock()
	_, err = s.Write(context.Background(), files, CommitMessage{Subject: "import: setup"})
	must(t, err)
}
