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

// TestTxnCrashAtEveryPointConverges: a write killed at any failpoint is
// finished by the next writer, whole: the same tree as without the crash,
// one commit, clean status, no journal.
func TestTxnCrashAtEveryPointConverges(t *testing.T) {
	for _, point := range []string{FailTxnStaged, FailTxnJournaled, FailTxnHalfFiles, FailTxnFiles, FailTxnCommitted} {
		t.Run(point, func(t *testing.T) {
			s := newStore(t)
			if !crashingWrite(t, s, point, crashFiles) {
				t.Fatalf("did not crash at %s", point)
			}
			rec := lockAndRecover(t, s)
			if point == FailTxnStaged {
				// Nothing was journaled: the write never happened.
				if got := readOrAbsent(t, s, "topics/a.md"); got != "<absent>" {
					t.Fatalf("topics/a.md = %q after a crash before the journal", got)
				}
				return
			}
			for p, want := range crashFiles {
				if got := readOrAbsent(t, s, p); got != string(want) {
					t.Errorf("%s = %q, want %q (recovered: %q)", p, got, want, rec)
				}
			}
			if n := gitOut(t, s.Dir, "log", "--oneline", "--grep", "crash test"); strings.Count(n, "\n")+1 != 1 || n == "" {
				t.Errorf("commits: %q", n)
			}
			if st := gitOut(t, s.Dir, "status", "--porcelain"); st != "" {
				t.Errorf("status %q", st)
			}
			if j, err := s.readTxnJournal(); j != nil || err != nil {
				t.Errorf("journal left: %v %v", j, err)
			}
		})
	}
}

// TestFinding1_StaleJournalNeverRevertsLaterCommits: a write interrupted
// before its commit, then a person's commit: the next writer must not roll
// the old write over the new commit; it undoes the interrupted write's
// uncommitted bytes and keeps the person's commit.
func TestFinding1_StaleJournalNeverRevertsLaterCommits(t *testing.T) {
	for _, point := range []string{FailTxnHalfFiles, FailTxnFiles} {
		t.Run(point, func(t *testing.T) {
			s := newStore(t)
			if !crashingWrite(t, s, point, crashFiles) {
				t.Fatal("no crash")
			}
			// The person discards what is on disk and commits their own
			// entry.
			gitOut(t, s.Dir, "checkout", "--", ".")
			person := "# Core profile\n## Key decisions\n- [dec-009] The person's decision\n"
			must(t, os.WriteFile(s.abs(MainFile), []byte(person), 0o644))
			gitOut(t, s.Dir, "commit", "-qam", "person")
			personHead := gitOut(t, s.Dir, "rev-parse", "HEAD")
			rec := lockAndRecover(t, s)
			if len(rec) != 1 || !strings.Contains(rec[0], "HEAD moved") {
				t.Errorf("recovered: %q", rec)
			}
			if got := readOrAbsent(t, s, MainFile); got != person {
				t.Errorf("MEMORY.md = %q: the person's commit was reverted", got)
			}
			if got := gitOut(t, s.Dir, "rev-parse", "HEAD"); got != personHead {
				t.Errorf("HEAD moved to %s", got)
			}
			if st := gitOut(t, s.Dir, "status", "--porcelain", "--untracked-files=all"); st != "" {
				t.Errorf("status %q: memctl's uncommitted bytes left behind", st)
			}
		})
	}
}

// TestFinding2_HalfWrittenFilesAreNotAPersonsEdit: after a write killed
// midway, a person edits another file; recovery keeps the person's edit,
// puts memctl's uncommitted bytes back, and the hand-edit commit holds
// only what the person wrote.
func TestFinding2_HalfWrittenFilesAreNotAPersonsEdit(t *testing.T) {
	s := newStore(t)
	files := map[string][]byte{
		MainFile:      []byte("# Core profile\n## Key decisions\n- [dec-001] memctl's half write\n"),
		"topics/z.md": []byte("# Z\n- [fact-001] memctl's other half\n"),
	}
	if !crashingWrite(t, s, FailTxnHalfFiles, files) {
		t.Fatal("no crash")
	}
	// MEMORY.md (first in order) was replaced; the person now edits a
	// topic file of their own.
	must(t, os.MkdirAll(s.abs("topics"), 0o755))
	must(t, os.WriteFile(s.abs("topics/z.md"), []byte("# Z\n- [fact-050] the person's note\n"), 0o644))
	headBefore, _, _ := s.Repo.ReadHead(context.Background(), MainFile)
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "undid an interrupted write") {
		t.Fatalf("recovered: %q", rec)
	}
	if got := readOrAbsent(t, s, MainFile); got != string(headBefore) {
		t.Errorf("MEMORY.md = %q, want HEAD's %q", got, headBefore)
	}
	unlock, err := s.Lock(context.Background())
	must(t, err)
	defer unlock()
	h, err := s.CommitHandEdits(context.Background())
	must(t, err)
	if h.Commit == "" {
		t.Fatal("the person's edit was not committed")
	}
	if files := gitOut(t, s.Dir, "show", "--format=", "--name-only", "HEAD"); files != "topics/z.md" {
		t.Errorf("hand-edit commit holds %q", files)
	}
}

// TestFinding14_ReadersNeverSeeAHalfAppliedWrite: between a crash and the
// next writer, readers see the committed state, not a mix.
func TestFinding14_ReadersNeverSeeAHalfAppliedWrite(t *testing.T) {
	s := newStore(t)
	before, err := Load(context.Background(), s.Dir)
	must(t, err)
	if !crashingWrite(t, s, FailTxnHalfFiles, crashFiles) {
		t.Fatal("no crash")
	}
	if got := readOrAbsent(t, s, MainFile); got != string(crashFiles[MainFile]) {
		t.Fatalf("test premise: MEMORY.md on disk = %q", got)
	}
	// The write can be finished: readers see the whole new state.
	m, err := Load(context.Background(), s.Dir)
	must(t, err)
	if string(m.Main.Src) != string(crashFiles[MainFile]) || len(m.Topics) != 1 || string(m.Topics["a"].Src) != string(crashFiles["topics/a.md"]) {
		t.Errorf("reader saw %q and %d topics, want the whole new state", m.Main.Src, len(m.Topics))
	}
	v, err := OpenReadView(s.Dir)
	must(t, err)
	if !v.Overlaid() {
		t.Error("the view does not report the half-applied write")
	}
	v.Close()
	// A person discards MEMORY.md's half-written bytes and edits the topic
	// file: the write will be undone, readers see the whole old state.
	gitOut(t, s.Dir, "checkout", "--", MainFile)
	must(t, os.WriteFile(s.abs("topics/a.md"), []byte("# A\n- [fact-077] the person's own\n"), 0o644))
	m, err = Load(context.Background(), s.Dir)
	must(t, err)
	if string(m.Main.Src) != string(before.Main.Src) || string(m.Topics["a"].Src) != "# A\n- [fact-077] the person's own\n" {
		t.Errorf("reader saw %q, %q", m.Main.Src, m.Topics["a"].Src)
	}
}

// TestFinding2_EditOnTopOfAHalfWriteKeepsItWhole: a person edits a file
// holding a killed import's output (on top of it): the import lands whole
// as memctl's commit, the person's change as their own commit after it.
func TestFinding2_EditOnTopOfAHalfWriteKeepsItWhole(t *testing.T) {
	s := newStore(t)
	if !crashingWrite(t, s, FailTxnHalfFiles, crashFiles) {
		t.Fatal("no crash")
	}
	edited := strings.Replace(string(crashFiles[MainFile]), "## Key decisions", "## Key decisions\n- [dec-050] The person's own decision", 1)
	must(t, os.WriteFile(s.abs(MainFile), []byte(edited), 0o644))
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "finished an interrupted write") || !strings.Contains(rec[0], "are kept") {
		t.Fatalf("recovered: %q", rec)
	}
	if got := gitOut(t, s.Dir, "show", "HEAD:"+MainFile); got+"\n" != string(crashFiles[MainFile]) {
		t.Errorf("memctl's commit holds MEMORY.md %q", got)
	}
	if got := gitOut(t, s.Dir, "show", "HEAD:topics/a.md"); got+"\n" != string(crashFiles["topics/a.md"]) {
		t.Errorf("memctl's commit holds topics/a.md %q", got)
	}
	if got := readOrAbsent(t, s, MainFile); got != edited {
		t.Errorf("the person's edit was lost: %q", got)
	}
	he := commitHandEdits(t, s)
	if he.Commit == "" {
		t.Fatal("the person's edit was not committed")
	}
	if diff := gitOut(t, s.Dir, "show", "--format=", "HEAD"); !strings.Contains(diff, "+- [dec-050] The person's own decision") || strings.Contains(diff, "+# Core profile") {
		t.Errorf("hand-edit commit:\n%s", diff)
	}
}

// TestEditedOnTop: which side of an interrupted write a person's edit was
// made on (found by the simulation: a person's new entry that happens to
// take the id the write had allocated is not a sign of editing on top).
func TestEditedOnTop(t *testing.T) {
	old := "# A\n- [a-001] one\n- [a-002] two\n"
	new := "# A\n- [a-001] one\n- [a-002] two\n- [a-003] memctl's three\n- [a-004] memctl's four\n"
	tests := []struct {
		name, edited string
		want         bool
	}{
		{"on new, a line added", new + "- [a-009] the person's\n", true},
		{"on new, an unrelated entry changed", strings.Replace(new, "one", "ONE", 1), true},
		{"on old, a line added", old + "- [a-009] the person's\n", false},
		{"on old, same id as memctl's first", old + "- [a-003] the person's own three\n", false},
		{"on new, one of memctl's entries edited", strings.Replace(new, "memctl's three", "edited three", 1), true},
		{"on new, both of memctl's entries edited", strings.Replace(strings.Replace(new, "memctl's three", "x", 1), "memctl's four", "y", 1), false},
	}
	// Found by the simulation (seed 20033): an import added an entry and a
	// topic index line to MEMORY.md; the person edited that entry.
	oldMain := "# Core profile\n## Key decisions\n\n# Topic index\n\n# Archive\n"
	newMain := "# Core profile\n## Key decisions\n- [dec-001] The marmot service timeout is 5971 seconds\n\n# Topic index\n- Note notes → topics/note.md\n\n# Archive\n"
	editedMain := strings.Replace(newMain, "5971", "4739", 1)
	if !editedOnTop(MainFile, []byte(oldMain), []byte(newMain), []byte(editedMain)) {
		t.Error("an edit of the entry a write added, beside its topic index line: not taken as on top")
	}
	if editedOnTop(MainFile, []byte(oldMain), []byte(newMain), []byte(oldMain+"- [dec-001] The person's own\n")) {
		t.Error("an edit of the old content taken as on top")
	}
	for _, tc := range tests {
		if got := editedOnTop("topics/a.md", []byte(old), []byte(new), []byte(tc.edited)); got != tc.want {
			t.Errorf("%s: editedOnTop = %v, want %v", tc.name, got, tc.want)
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
	if ents, _ := os.ReadDir(s.abs(TxnDir)); len(ents) != 0 {
		t.Errorf("staged files left: %v", ents)
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

// TestLegacyJournalIsNeverRolledForward: an earlier release's journal
// (not bound to a commit) is dropped, and the uncommitted bytes it wrote
// are put back to HEAD.
func TestLegacyJournalIsNeverRolledForward(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	head := readOrAbsent(t, s, MainFile)
	must(t, os.MkdirAll(s.abs(".memctl/cache"), 0o755))
	must(t, os.WriteFile(s.abs(legacyJournals[1]), []byte(`{"files":{"MEMORY.md":"bWVtY3RsJ3Mgb2xkIHdyaXRlCg=="}}`), 0o644))
	must(t, os.WriteFile(s.abs(MainFile), []byte("memctl's old write\n"), 0o644))
	rec := lockAndRecover(t, s)
	if got := readOrAbsent(t, s, MainFile); got != head {
		t.Errorf("MEMORY.md = %q", got)
	}
	if len(rec) != 1 || !strings.Contains(rec[0], "put back MEMORY.md") {
		t.Errorf("recovered %q", rec)
	}
	_ = ctx
}

// BenchmarkOpenReadView is what every reader pays for never seeing a
// half-applied write (a shared flock and a look for a journal); the
// baseline reads MEMORY.md, the least a reader does.
func BenchmarkOpenReadView(b *testing.B) {
	dir := b.TempDir()
	must(b, os.MkdirAll(filepath.Join(dir, ".memctl", "cache"), 0o755))
	must(b, os.WriteFile(filepath.Join(dir, MainFile), []byte("# Core profile\n## Key decisions\n- [dec-001] x\n"), 0o644))
	b.Run("view", func(b *testing.B) {
		for b.Loop() {
			v, err := OpenReadView(dir)
			if err != nil {
				b.Fatal(err)
			}
			v.Close()
		}
	})
	b.Run("baseline-read-MEMORY.md", func(b *testing.B) {
		for b.Loop() {
			if _, err := ReadMemoryFile(dir, MainFile); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestPersonCommitOfAHalfWriteIsFinished (found by the simulation): after
// a write killed midway, a person's `git commit -a` takes memctl's
// half-written file; the next writer finishes the rest on top of that
// commit, so the write lands whole (an entry moved between files never
// stays lost).
func TestPersonCommitOfAHalfWriteIsFinished(t *testing.T) {
	s := newStore(t)
	if !crashingWrite(t, s, FailTxnHalfFiles, crashFiles) {
		t.Fatal("no crash")
	}
	gitOut(t, s.Dir, "commit", "-qam", "person: commit everything")
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "on top of") {
		t.Fatalf("recovered: %q", rec)
	}
	for p, want := range crashFiles {
		if got := gitOut(t, s.Dir, "show", "HEAD:"+p); got+"\n" != string(want) {
			t.Errorf("HEAD:%s = %q", p, got)
		}
	}
	if subj := gitOut(t, s.Dir, "log", "-2", "--format=%s"); !strings.HasPrefix(subj, "import: crash test\nperson: commit everything") {
		t.Errorf("log %q", subj)
	}
	if st := gitOut(t, s.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("status %q", st)
	}
}

// TestPersonCommitOfPartThenEditIsFinished (found by the soak, seed
// 20135): after a write killed with its files in place, a person commits
// some of them, then edits one of those and commits again; the next writer
// finishes the files nobody committed on top, and keeps the person's later
// edit. Before, the moved HEAD made recovery undo the uncommitted rest, so
// an import stayed half committed.
func TestPersonCommitOfPartThenEditIsFinished(t *testing.T) {
	s := newStore(t)
	files := map[string][]byte{
		MainFile:      []byte("# Core profile\n## Key decisions\n- [dec-001] Crash test decision\n"),
		"topics/a.md": []byte("# A\n- [fact-001] Crash test fact\n"),
		"topics/b.md": []byte("# B\n- [fact-002] The part nobody committed\n"),
	}
	if !crashingWrite(t, s, FailTxnFiles, files) {
		t.Fatal("no crash")
	}
	gitOut(t, s.Dir, "add", "--", MainFile, "topics/a.md")
	gitOut(t, s.Dir, "commit", "-qm", "person: commit part", "--", MainFile, "topics/a.md")
	edited := "# A\n- [fact-001] Crash test fact, edited by the person\n"
	must(t, os.WriteFile(filepath.Join(s.Dir, "topics", "a.md"), []byte(edited), 0o644))
	gitOut(t, s.Dir, "commit", "-qam", "person: edit on top")
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "on top of") {
		t.Fatalf("recovered: %q", rec)
	}
	want := map[string]string{MainFile: string(files[MainFile]), "topics/a.md": edited, "topics/b.md": string(files["topics/b.md"])}
	for p, w := range want {
		if got := gitOut(t, s.Dir, "show", "HEAD:"+p); got+"\n" != w {
			t.Errorf("HEAD:%s = %q, want %q", p, got, w)
		}
		if got := readOrAbsent(t, s, p); got != w {
			t.Errorf("disk %s = %q, want %q", p, got, w)
		}
	}
	if st := gitOut(t, s.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("status %q", st)
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

// TestPersonCommitOfAnEditOnTopIsFinished (found by the soak, seed
// 40078): after an import killed with its files in place, a person edits
// one of them on top of the import and commits only that file; the rest of
// the import is finished on top of their commit. Before, only a commit of
// memctl's exact bytes counted as part of the write, so recovery undid the
// rest and the import stayed half committed.
func TestPersonCommitOfAnEditOnTopIsFinished(t *testing.T) {
	s := newStore(t)
	files := map[string][]byte{
		MainFile:      []byte("# Core profile\n## Key decisions\n- [dec-001] Crash test decision\n"),
		"topics/a.md": []byte("# A\n- [fact-001] Crash test fact\n"),
		"topics/b.md": []byte("# B\n- [fact-002] The part nobody committed\n"),
	}
	if !crashingWrite(t, s, FailTxnFiles, files) {
		t.Fatal("no crash")
	}
	edited := "# A\n- [fact-001] Crash test fact, edited\n"
	must(t, os.WriteFile(s.abs("topics/a.md"), []byte(edited), 0o644))
	gitOut(t, s.Dir, "add", "--", "topics/a.md")
	gitOut(t, s.Dir, "commit", "-qm", "person: my edit", "--", "topics/a.md")
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "on top of") {
		t.Fatalf("recovered: %q", rec)
	}
	want := map[string]string{MainFile: string(files[MainFile]), "topics/a.md": edited, "topics/b.md": string(files["topics/b.md"])}
	for p, w := range want {
		if got := gitOut(t, s.Dir, "show", "HEAD:"+p); got+"\n" != w {
			t.Errorf("HEAD:%s = %q, want %q", p, got, w)
		}
	}
	if st := gitOut(t, s.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("status %q", st)
	}
}

// TestPersonCommitOfTheirOwnEditMergesTheRest (found by the soak, seed
// 30058): an import is killed with MEMORY.md written and the topic file
// not yet; a person adds an entry of their own to the topic file and runs
// `git commit -a`, which takes memctl's MEMORY.md along. The import's
// topic entries are merged into the person's version of the file, so the
// import lands whole and the person's entry stays.
func TestPersonCommitOfTheirOwnEditMergesTheRest(t *testing.T) {
	s := newStore(t)
	writeFiles(t, s, map[string][]byte{"topics/a.md": []byte("# A\n- [fact-001] One\n")})
	files := map[string][]byte{
		MainFile:      []byte("# Core profile\n## Key decisions\n- [dec-001] Crash test decision\n"),
		"topics/a.md": []byte("# A\n- [fact-001] One\n- [fact-002] Two, imported\n- [fact-003] Three, imported\n"),
	}
	if !crashingWrite(t, s, FailTxnHalfFiles, files) {
		t.Fatal("no crash")
	}
	if got := readOrAbsent(t, s, "topics/a.md"); got != "# A\n- [fact-001] One\n" {
		t.Fatalf("test premise: topics/a.md = %q", got)
	}
	must(t, os.WriteFile(s.abs("topics/a.md"), []byte("# A\n- [fact-001] One\n- [fact-050] The person's own\n"), 0o644))
	gitOut(t, s.Dir, "commit", "-qam", "person: commit everything")
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "on top of") {
		t.Fatalf("recovered: %q", rec)
	}
	wantA := "# A\n- [fact-001] One\n- [fact-050] The person's own\n- [fact-002] Two, imported\n- [fact-003] Three, imported\n"
	if got := gitOut(t, s.Dir, "show", "HEAD:topics/a.md"); got+"\n" != wantA {
		t.Errorf("HEAD:topics/a.md = %q, want %q", got, wantA)
	}
	if got := readOrAbsent(t, s, "topics/a.md"); got != wantA {
		t.Errorf("disk topics/a.md = %q", got)
	}
	if got := gitOut(t, s.Dir, "show", "HEAD:"+MainFile); got+"\n" != string(files[MainFile]) {
		t.Errorf("HEAD:MEMORY.md = %q", got)
	}
	if st := gitOut(t, s.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("status %q", st)
	}
}

// TestPersonCommitThatConflictsIsUndone: when the person's committed
// change and memctl's collide on one entry, nothing is merged: the write
// is undone (its candidates stay queued), the person's own change stays,
// and the part of memctl's their commit took along (MEMORY.md) is taken
// out in a commit of memctl's.
func TestPersonCommitThatConflictsIsUndone(t *testing.T) {
	s := newStore(t)
	writeFiles(t, s, map[string][]byte{"topics/a.md": []byte("# A\n- [fact-001] One\n")})
	files := map[string][]byte{
		MainFile:      []byte("# Core profile\n## Key decisions\n- [dec-001] Crash test decision\n"),
		"topics/a.md": []byte("# A\n- [fact-001] One, rewritten by memctl\n"),
	}
	if !crashingWrite(t, s, FailTxnHalfFiles, files) {
		t.Fatal("no crash")
	}
	person := "# A\n- [fact-001] One, rewritten by the person\n"
	must(t, os.WriteFile(s.abs("topics/a.md"), []byte(person), 0o644))
	gitOut(t, s.Dir, "commit", "-qam", "person: commit everything")
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "undid an interrupted write") {
		t.Fatalf("recovered: %q", rec)
	}
	if got := gitOut(t, s.Dir, "show", "HEAD:topics/a.md"); got+"\n" != person {
		t.Errorf("HEAD:topics/a.md = %q", got)
	}
	if got := readOrAbsent(t, s, "topics/a.md"); got != person {
		t.Errorf("disk topics/a.md = %q", got)
	}
	if got := gitOut(t, s.Dir, "show", "HEAD:"+MainFile); strings.Contains(got, "dec-001") {
		t.Errorf("HEAD:MEMORY.md still holds the undone write's dec-001: %q", got)
	}
}

// TestPersonEditOnTopUncommittedIsKept (found by the soak, seed 50015): a
// killed import's files are in place; a person commits one of them and
// edits another on top of memctl's bytes without committing it. The
// import is finished on top of their commit, the edited file committed
// as memctl wrote it, and the person's edit stays on disk, to be
// committed as their hand edit. Before, the uncommitted edit made
// recovery undo the rest, and the next hand-edit commit took memctl's
// half-written entries as the person's.
func TestPersonEditOnTopUncommittedIsKept(t *testing.T) {
	s := newStore(t)
	writeFiles(t, s, map[string][]byte{"topics/b.md": []byte("# B\n- [fact-001] One\n")})
	files := map[string][]byte{
		"topics/a.md": []byte("# A\n- [fact-002] Two, imported\n"),
		"topics/b.md": []byte("# B\n- [fact-001] One\n- [fact-003] Three, imported\n- [fact-004] Four, imported\n"),
	}
	if !crashingWrite(t, s, FailTxnFiles, files) {
		t.Fatal("no crash")
	}
	gitOut(t, s.Dir, "add", "--", "topics/a.md")
	gitOut(t, s.Dir, "commit", "-qm", "person: commit a", "--", "topics/a.md")
	edited := "# B\n- [fact-003] Three, imported\n- [fact-004] Four, imported\n" // fact-001 deleted by the person
	must(t, os.WriteFile(s.abs("topics/b.md"), []byte(edited), 0o644))
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "on top of") || !strings.Contains(rec[0], "are kept") {
		t.Fatalf("recovered: %q", rec)
	}
	if got := gitOut(t, s.Dir, "show", "HEAD:topics/b.md"); got+"\n" != string(files["topics/b.md"]) {
		t.Errorf("HEAD:topics/b.md = %q, want memctl's", got)
	}
	if got := readOrAbsent(t, s, "topics/b.md"); got != edited {
		t.Errorf("the person's edit was lost: %q", got)
	}
}

// TestUndoTakesMemctlsPartOutOfAnEdit: a write is undone (the person
// edited one file on the old content, in conflict with memctl's change)
// while another file holds an edit
// made on top of memctl's bytes: memctl's change is taken out of that
// file and the person's edit stays, so the hand-edit commit holds only
// what the person wrote.
func TestUndoTakesMemctlsPartOutOfAnEdit(t *testing.T) {
	s := editsOnTopAndInConflictAfterAKilledImport(t)
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "undid") || !strings.Contains(rec[0], "taken out") {
		t.Fatalf("recovered: %q", rec)
	}
	if got, want := readOrAbsent(t, s, "topics/a.md"), "# A\n- [fact-001] One\n- [fact-050] The person's, on top\n"; got != want {
		t.Errorf("topics/a.md = %q, want %q", got, want)
	}
	he := commitHandEdits(t, s)
	if he.Commit == "" {
		t.Fatal("the person's edits were not committed")
	}
	if diff := gitOut(t, s.Dir, "show", "--format=", "HEAD"); strings.Contains(diff, "imported") {
		t.Errorf("the hand-edit commit holds memctl's entries:\n%s", diff)
	}
}

// editsOnTopAndInConflictAfterAKilledImport kills an import after its
// first file; the person then edits that file on top of memctl's bytes
// and the second on its old content, in conflict with memctl's change
// (their own entry with the id memctl used), so the write will be undone.
func editsOnTopAndInConflictAfterAKilledImport(t *testing.T) *Store {
	s := newStore(t)
	writeFiles(t, s, map[string][]byte{
		"topics/a.md": []byte("# A\n- [fact-001] One\n"),
		"topics/b.md": []byte("# B\n- [fact-002] Two\n"),
	})
	files := map[string][]byte{
		"topics/a.md": []byte("# A\n- [fact-001] One\n- [fact-003] Three, imported\n- [fact-004] Four, imported\n"),
		"topics/b.md": []byte("# B\n- [fact-002] Two\n- [fact-005] Five, imported\n"),
	}
	if !crashingWrite(t, s, FailTxnHalfFiles, files) {
		t.Fatal("no crash")
	}
	// a.md (first) holds memctl's bytes, b.md the old content.
	must(t, os.WriteFile(s.abs("topics/a.md"), append(append([]byte{}, files["topics/a.md"]...), "- [fact-050] The person's, on top\n"...), 0o644))
	// b.md: an edit on the old content that conflicts with memctl's (the
	// person gave their own entry the id memctl used), so the write is
	// undone rather than merged.
	must(t, os.WriteFile(s.abs("topics/b.md"), []byte("# B\n- [fact-002] Two\n- [fact-005] The person's, on the old\n"), 0o644))
	return s
}
