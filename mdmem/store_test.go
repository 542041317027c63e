package mdmem

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func gitOut(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func newStore(t *testing.T) *Store {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	for _, k := range []string{"GIT_AUTHOR", "GIT_COMMITTER"} {
		t.Setenv(k+"_NAME", "Test Person")
		t.Setenv(k+"_EMAIL", "person@example.com")
	}
	s, _, err := Init(context.Background(), filepath.Join(t.TempDir(), "mem"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestWriteFailureRestoresFiles: a commit that fails (git's index.lock held)
// leaves the files as they were and no journal.
func TestWriteFailureRestoresFiles(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	before, _ := os.ReadFile(filepath.Join(s.Dir, MainFile))
	must(t, os.WriteFile(filepath.Join(s.Dir, ".git", "index.lock"), nil, 0o644))
	unlock, err := s.Lock(ctx)
	must(t, err)
	defer unlock()
	_, err = s.Write(ctx, map[string][]byte{MainFile: []byte("new\n"), "topics/new.md": []byte("- [fact-1] x\n")}, CommitMessage{Subject: "x"})
	if err == nil || !strings.Contains(err.Error(), "index.lock") {
		t.Fatalf("Write error %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(s.Dir, MainFile)); string(got) != string(before) {
		t.Errorf("MEMORY.md not restored: %q", got)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, "topics", "new.md")); !os.IsNotExist(err) {
		t.Errorf("topics/new.md left behind: %v", err)
	}
	if j, err := readJournalIn(s.Dir, journalName); j != nil || err != nil {
		t.Errorf("journal left: %v %v", j, err)
	}
}

// TestWriteRefusesPathsOutsideTheMemory: no path escapes the directory.
func TestWriteRefusesPathsOutsideTheMemory(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	for _, p := range []string{"../x.md", "/etc/x", "topics/../../x", "a//b", "topics\\x"} {
		if _, err := s.Write(ctx, map[string][]byte{p: []byte("x")}, CommitMessage{Subject: "x"}); err == nil {
			t.Errorf("Write(%q) accepted", p)
		}
	}
}

func TestCommitMessageTemplate(t *testing.T) {
	msg := CommitMessage{Subject: "import: 2 entries\nsecond line", Body: "- core: 2\n", Op: "import", Entries: []string{"pref-002", "pref-001", "pref-001"}, Consumed: []string{"c1"}}
	want := "import: 2 entries second line\n\n- core: 2\n\nMemctl-Op: import\nMemctl-Entry: pref-001\nMemctl-Entry: pref-002\nMemctl-Consumed: c1\n"
	if got := msg.String(); got != want {
		t.Errorf("String() =\n%q\nwant\n%q", got, want)
	}
	if got := (CommitMessage{Subject: "only"}).String(); got != "only\n" {
		t.Errorf("bare message %q", got)
	}
	// An override that drops the trailers gets them back.
	got, err := msg.Render("{{.Op}} did {{.Subject}}")
	if err != nil || !strings.HasPrefix(got, "import did import: 2 entries") || !strings.Contains(got, "\nMemctl-Entry: pref-002\n") {
		t.Errorf("override: %q, %v", got, err)
	}
	for _, bad := range []string{"{{.Nope}}", "{{", "   "} {
		if _, err := msg.Render(bad); err == nil {
			t.Errorf("template %q accepted", bad)
		}
	}
}

// TestLockSweepsStrayTempFiles: temp files a killed writer left are
// removed under the lock (git status stays clean); the queue, written
// without the lock, is left alone.
func TestLockSweepsStrayTempFiles(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	stray := []string{".MEMORY.md.tmp-123", "topics/.a.md.tmp-1", ".memctl/.state.json.tmp-9", ".memctl/cache/.index.bin.tmp-2", ".memctl/queue/held/.c1.json.tmp-3"}
	keep := []string{".memctl/queue/.c2.json.tmp-4", "topics/notes.md", ".memctl/cache/x.tmp-5"}
	for _, p := range append(append([]string{}, stray...), keep...) {
		full := filepath.Join(s.Dir, filepath.FromSlash(p))
		must(t, os.MkdirAll(filepath.Dir(full), 0o755))
		must(t, os.WriteFile(full, []byte("x"), 0o644))
	}
	old := filepath.Join(s.Dir, ".memctl", "queue", ".c3.json.tmp-6")
	must(t, os.WriteFile(old, []byte("x"), 0o644))
	must(t, os.Chtimes(old, time.Now().Add(-time.Hour), time.Now().Add(-time.Hour)))
	stray = append(stray, ".memctl/queue/.c3.json.tmp-6")
	unlock, err := s.Lock(ctx)
	must(t, err)
	defer unlock()
	for _, p := range stray {
		if _, err := os.Stat(filepath.Join(s.Dir, filepath.FromSlash(p))); !os.IsNotExist(err) {
			t.Errorf("%s not removed", p)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(filepath.Join(s.Dir, filepath.FromSlash(p))); err != nil {
			t.Errorf("%s removed: %v", p, err)
		}
	}
	if len(s.Recovered) != len(stray) {
		t.Errorf("Recovered = %q", s.Recovered)
	}
}
