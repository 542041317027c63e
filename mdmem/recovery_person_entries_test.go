package mdmem

import (
	"os"
	"strings"
	"testing"
)

// Recovery when a person deleted or edited one of the entries a killed
// write added (found by the soak, seed 270017: a killed import of 189
// entries stayed half committed).

// killedImportOfThree kills an import that adds three entries to
// topics/a.md and one to MEMORY.md after its files are in place (no
// commit). It returns the store, the content of a.md before the import
// and memctl's MEMORY.md.
func killedImportOfThree(t *testing.T) (s *Store, topic0, main1 string) {
	t.Helper()
	s = newStore(t)
	main0 := readOrAbsent(t, s, MainFile)
	topic0 = "# A\n- [fact-001] The person's first fact\n"
	writeFiles(t, s, map[string][]byte{"topics/a.md": []byte(topic0)})
	files := map[string][]byte{
		MainFile: []byte(strings.Replace(main0, "## Key decisions\n", "## Key decisions\n- [dec-001] The raven queue runs 12 workers\n", 1)),
		"topics/a.md": []byte(topic0 +
			"- [fact-002] The koala service timeout is 2571 seconds\n" +
			"- [fact-003] Backups of the saola database are kept for 6236 days\n" +
			"- [fact-004] The ibex cluster runs release 6337\n"),
	}
	if !crashingWrite(t, s, FailTxnFiles, files) {
		t.Fatal("no crash")
	}
	return s, topic0, string(files[MainFile])
}

// TestPersonCommitDeletingOneOfMemctlsEntriesIsFinished: the person
// deletes one of the import's entries in a.md and commits that file; the
// rest of the import (MEMORY.md) is finished on top of their commit.
// Before, a person's version counted as holding memctl's change only if
// every entry memctl added was still there, so the import was undone
// instead, and its committed part could not be told from the person's.
func TestPersonCommitDeletingOneOfMemctlsEntriesIsFinished(t *testing.T) {
	s, _, main1 := killedImportOfThree(t)
	a := strings.Replace(readOrAbsent(t, s, "topics/a.md"), "- [fact-003] Backups of the saola database are kept for 6236 days\n", "", 1)
	must(t, os.WriteFile(s.abs("topics/a.md"), []byte(a), 0o644))
	gitOut(t, s.Dir, "commit", "-qm", "person: drop fact-003", "topics/a.md")
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "finished") {
		t.Fatalf("recovered: %q, want the import finished", rec)
	}
	if got := gitOut(t, s.Dir, "show", "HEAD:"+MainFile); got != strings.TrimSpace(main1) {
		t.Errorf("HEAD:MEMORY.md is not the import's:\n%s", got)
	}
	if got := gitOut(t, s.Dir, "show", "HEAD:topics/a.md"); got != strings.TrimSpace(a) {
		t.Errorf("the person's commit of a.md was changed: %q", got)
	}
	if st := gitOut(t, s.Dir, "status", "--porcelain"); st != "" {
		t.Errorf("status %q", st)
	}
}

// TestUndoKeepsAPersonsEditOfMemctlsEntry: the person fixes a word in one
// of the import's entries and commits a.md, then edits MEMORY.md on its
// old content, so the import cannot be finished and is undone. The undo
// takes the import's other entries out of the person's commit and keeps
// the entry they edited (it is theirs now). Before, the entry both sides
// changed made the take-out a conflict: the file was left as it was, and
// two thirds of the import stayed committed.
func TestUndoKeepsAPersonsEditOfMemctlsEntry(t *testing.T) {
	s, topic0, _ := killedImportOfThree(t)
	edited := "- [fact-004] The ibex cluster runs release 6338\n"
	a := strings.Replace(readOrAbsent(t, s, "topics/a.md"), "- [fact-004] The ibex cluster runs release 6337\n", edited, 1)
	must(t, os.WriteFile(s.abs("topics/a.md"), []byte(a), 0o644))
	gitOut(t, s.Dir, "commit", "-qm", "person: fix fact-004", "topics/a.md")
	gitOut(t, s.Dir, "checkout", "--", MainFile)
	main2 := readOrAbsent(t, s, MainFile) + "- The person's own line\n"
	must(t, os.WriteFile(s.abs(MainFile), []byte(main2), 0o644))
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "undid") {
		t.Fatalf("recovered: %q, want the import undone", rec)
	}
	if got, want := gitOut(t, s.Dir, "show", "HEAD:topics/a.md"), strings.TrimSpace(topic0+edited); got != want {
		t.Errorf("HEAD:topics/a.md = %q, want the person's entries only: %q", got, want)
	}
	if got := readOrAbsent(t, s, MainFile); got != main2 {
		t.Errorf("the person's uncommitted MEMORY.md changed: %q", got)
	}
}

// TestUndoTakesMemctlsEntriesOutOfAnUncommittedEditOfOne: as above, but
// the person's edit of the import's entry is not committed and HEAD moved
// by a commit of another file. The undo takes the import's untouched
// entries out of a.md on disk and leaves the edited one, so the next
// hand-edit commit holds only what the person wrote.
func TestUndoTakesMemctlsEntriesOutOfAnUncommittedEditOfOne(t *testing.T) {
	s, topic0, _ := killedImportOfThree(t)
	edited := "- [fact-002] The koala service timeout is 2572 seconds\n"
	a := strings.Replace(readOrAbsent(t, s, "topics/a.md"), "- [fact-002] The koala service timeout is 2571 seconds\n", edited, 1)
	must(t, os.WriteFile(s.abs("topics/a.md"), []byte(a), 0o644))
	gitOut(t, s.Dir, "checkout", "--", MainFile)
	must(t, os.WriteFile(s.abs("notes.txt"), []byte("unrelated\n"), 0o644))
	gitOut(t, s.Dir, "add", "notes.txt")
	gitOut(t, s.Dir, "commit", "-qm", "person: notes", "notes.txt")
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "undid") {
		t.Fatalf("recovered: %q, want the import undone", rec)
	}
	if got, want := readOrAbsent(t, s, "topics/a.md"), topic0+edited; got != want {
		t.Errorf("topics/a.md = %q, want the person's entries only: %q", got, want)
	}
}

// TestTakeOutOnto: taking memctl's change out of a person's version keeps
// every entry the person changed after memctl wrote it. Where both sides
// changed a stretch, the person's lines come first (merge3Lines).
func TestTakeOutOnto(t *testing.T) {
	const (
		target  = "# A\n- [fact-001] One\n- [fact-002] Two\n"
		written = "# A\n- [fact-001] One\n- [fact-002] Two, rewritten\n- [fact-003] Three\n- [fact-004] Four\n"
	)
	for _, tc := range []struct {
		name, theirs, want string
	}{
		{"untouched", written, target},
		{"an added entry edited", strings.Replace(written, "Three", "Three!", 1), "# A\n- [fact-001] One\n- [fact-003] Three!\n- [fact-002] Two\n"},
		{"an added entry deleted", strings.Replace(written, "- [fact-003] Three\n", "", 1), target},
		{"a rewritten entry edited", strings.Replace(written, "Two, rewritten", "Two, rewritten again", 1), "# A\n- [fact-001] One\n- [fact-002] Two, rewritten again\n"},
		{"a rewritten entry deleted", strings.Replace(written, "- [fact-002] Two, rewritten\n", "", 1), "# A\n- [fact-001] One\n"},
		{"an entry of the person's", written + "- [fact-005] Five\n", "# A\n- [fact-001] One\n- [fact-005] Five\n- [fact-002] Two\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := takeOutOnto("topics/a.md", []byte(written), []byte(target), []byte(tc.theirs))
			if !ok || string(got) != tc.want {
				t.Errorf("takeOutOnto = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
}

// TestUndoTakesMemctlsEntryOutWhenThePersonDeletedTheOthers (found by the
// simulation's scenario for seed 270017): the person deletes two of the
// three entries a killed import added to a.md, so the file no longer
// counts as edited on top of the import (editedOnTop), yet it holds the
// third as memctl wrote it. The undo takes that one out too; before, the
// file was left as it was, and the next hand-edit commit took memctl's
// entry as the person's.
func TestUndoTakesMemctlsEntryOutWhenThePersonDeletedTheOthers(t *testing.T) {
	s, topic0, _ := killedImportOfThree(t)
	a := readOrAbsent(t, s, "topics/a.md")
	for _, l := range []string{"- [fact-002] The koala service timeout is 2571 seconds\n", "- [fact-003] Backups of the saola database are kept for 6236 days\n"} {
		a = strings.Replace(a, l, "", 1)
	}
	must(t, os.WriteFile(s.abs("topics/a.md"), []byte(a), 0o644))
	gitOut(t, s.Dir, "checkout", "--", MainFile)
	must(t, os.WriteFile(s.abs("notes.txt"), []byte("unrelated\n"), 0o644))
	gitOut(t, s.Dir, "add", "notes.txt")
	gitOut(t, s.Dir, "commit", "-qm", "person: notes", "notes.txt")
	v, err := OpenReadView(s.Dir)
	must(t, err)
	seen, err := v.ReadFile("topics/a.md")
	v.Close()
	must(t, err)
	rec := lockAndRecover(t, s)
	if len(rec) != 1 || !strings.Contains(rec[0], "undid") {
		t.Fatalf("recovered: %q, want the import undone", rec)
	}
	if got := readOrAbsent(t, s, "topics/a.md"); got != topic0 {
		t.Errorf("topics/a.md = %q, want memctl's entry taken out: %q", got, topic0)
	}
	if string(seen) != topic0 {
		t.Errorf("a reader saw %q before the recovery, want what it leaves: %q", seen, topic0)
	}
}
