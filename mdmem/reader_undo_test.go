package mdmem

import (
	"context"
	"os"
	"sort"
	"strings"
	"testing"
)

// liveIDs lists the ids a reader (Load, through the ReadView) sees.
func liveIDs(t *testing.T, dir string) []string {
	t.Helper()
	m, err := Load(context.Background(), dir)
	must(t, err)
	var ids []string
	for _, e := range m.Entries() {
		if e.ID != "" {
			ids = append(ids, e.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

// TestReaderSeesTheUndoAfterAnUnrelatedCommit: a write is
// killed after replacing some (or all) of its files; a person then
// commits something that holds no part of the write (their own new topic
// file). HEAD moved "otherwise", so the next writer undoes the write
// (FORMAT.md, the write transaction: "HEAD moved otherwise (a person's
// commit, pull) ... undo"). Readers must "see the whole state recovery
// will reach"; the documented exception is only "such a commit's part of
// the write" — and this commit holds none of it. Yet the reader shows the
// whole new state (dec-001, fact-001), which the next writer then takes
// away: an agent was injected entries that vanish.
func TestReaderSeesTheUndoAfterAnUnrelatedCommit(t *testing.T) {
	for _, point := range []string{FailTxnHalfFiles, FailTxnFiles} {
		t.Run(point, func(t *testing.T) {
			s := newStore(t)
			if !crashingWrite(t, s, point, crashFiles) {
				t.Fatal("no crash")
			}
			// The person commits only a topic file of their own, leaving
			// memctl's half-written bytes uncommitted on disk.
			must(t, os.MkdirAll(s.abs("topics"), 0o755))
			must(t, os.WriteFile(s.abs("topics/mine.md"), []byte("# Mine\n- [note-050] The person's own note\n"), 0o644))
			gitOut(t, s.Dir, "add", "topics/mine.md")
			gitOut(t, s.Dir, "commit", "-qm", "person: my notes")

			readerSaw := liveIDs(t, s.Dir)

			rec := lockAndRecover(t, s)
			afterRecovery := liveIDs(t, s.Dir)
			if strings.Join(readerSaw, " ") != strings.Join(afterRecovery, " ") {
				t.Errorf("a reader before the next writer saw %v; the next writer (%q) left %v: the reader was shown entries that recovery then undid", readerSaw, rec, afterRecovery)
			}
		})
	}
}
