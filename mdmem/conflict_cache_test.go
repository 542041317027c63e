package mdmem

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConflictScanReadsOnlyChangedFiles: a file found without conflict
// markers, once older than RacyWindow, is recorded with its stat data and
// not read again while that is the same (a forged record of a conflicted
// file shows the skip); any write to it changes its stat data, so markers
// written later are found; a file written within the window is not
// recorded.
func TestConflictScanReadsOnlyChangedFiles(t *testing.T) {
	// (sleeps past RacyWindow; newStore sets the environment, so not parallel)
	ctx := context.Background()
	s := newStore(t)
	p := filepath.Join(s.Dir, "topics", "a.md")
	_, err := s.Write(ctx, map[string][]byte{"topics/a.md": []byte("# A\n- [fact-001] Clean (agent)\n")}, CommitMessage{Subject: "a"})
	must(t, err)
	time.Sleep(RacyWindow + 200*time.Millisecond)
	must(t, s.CheckConflicts(ctx))
	if _, ok := s.readConflictsChecked()["topics/a.md"]; !ok {
		t.Fatal("a clean file older than the window was not recorded")
	}

	conflicted := "# A\n<<<<<<< HEAD\n- [fact-001] Ours (agent)\n=======\n- [fact-001] Theirs (agent)\n>>>>>>> other\n"
	must(t, os.WriteFile(p, []byte(conflicted), 0o644))
	var ce *ConflictError
	if err := s.CheckConflicts(ctx); !errors.As(err, &ce) || len(ce.Markers) != 1 || ce.Markers[0].File != "topics/a.md" {
		t.Fatalf("markers written after the record: %v", err)
	}
	if _, ok := s.readConflictsChecked()["topics/a.md"]; ok {
		t.Fatal("a conflicted file is recorded clean")
	}

	// A record that matches the file's stat data vouches for it: the
	// file is not read (here it holds markers, which a real record never
	// allows, since writing them changes the stat data).
	k, ok := statKeyOf(p)
	if !ok {
		t.Skip("no inode and ctime on this platform: nothing is recorded")
	}
	rec := fmt.Sprintf("%d %d %d %d topics/a.md\n", k.Size, k.Mtime, k.Ctime, k.Ino)
	must(t, os.WriteFile(s.abs(conflictsCheckedPath), []byte(rec), 0o600))
	if err := s.CheckConflicts(ctx); err != nil {
		t.Fatalf("a file whose stat data matches its record was read: %v", err)
	}

	// Cleaned just now: found clean, but within the window, not recorded.
	must(t, os.WriteFile(p, []byte("# A\n- [fact-001] Ours (agent)\n"), 0o644))
	must(t, s.CheckConflicts(ctx))
	if _, ok := s.readConflictsChecked()["topics/a.md"]; ok {
		t.Fatal("a file written within the window was recorded")
	}
	if b, _ := os.ReadFile(s.abs(conflictsCheckedPath)); !strings.Contains(string(b), MainFile) {
		t.Fatalf("MEMORY.md, unchanged, left the record: %q", b)
	}
}
