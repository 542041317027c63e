package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/memctl/memctl/mdmem"
)

// TestSimulationCatches proves the simulation's checks can fail: after a
// few ordinary steps, it breaks the memory behind memctl's back the way a
// bug in the write path would (a commit authored by memctl that loses an
// entry, reuses an id, lowers the state, commits a stray file or an
// invented fact, loses the category a candidate was given in; a queued
// candidate gone; a git lock that is not memctl's; a recovery note that
// says a write finished when it never took effect) and expects the named
// check to report it.
func TestSimulationCatches(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation skipped in -short mode")
	}
	bin := simBinary(t)
	lineOf := regexp.MustCompile(`(?m)^- \[([a-z]+-[0-9]+)\] (.*)$`)
	// asMemctl commits the working tree's changes to the given files as
	// memctl would.
	asMemctl := func(s *sim, msg string, paths ...string) {
		s.git(append([]string{"add", "--"}, paths...)...)
		s.git(append([]string{"commit", "-q", "--no-verify", "-m", msg, "--author", "memctl <memctl@localhost>", "--"}, paths...)...)
	}
	// anEntry returns a committed entry line of MEMORY.md or a topic file.
	anEntry := func(s *sim) (path, id, text string) {
		files, _ := filepath.Glob(filepath.Join(s.dir, "topics", "*.md"))
		files = append([]string{filepath.Join(s.dir, mdmem.MainFile)}, files...)
		for _, f := range files {
			b, _ := os.ReadFile(f)
			if m := lineOf.FindSubmatch(b); m != nil {
				rel, _ := filepath.Rel(s.dir, f)
				return rel, string(m[1]), string(m[2])
			}
		}
		s.t.Fatal("no entry to break")
		return
	}
	edit := func(s *sim, path string, fn func(string) string) {
		p := filepath.Join(s.dir, path)
		b, err := os.ReadFile(p)
		if err != nil {
			s.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(fn(string(b))), 0o600); err != nil {
			s.t.Fatal(err)
		}
	}
	tests := []struct {
		check    string
		sabotage func(s *sim)
	}{
		{"vanished", func(s *sim) {
			path, id, _ := anEntry(s)
			edit(s, path, func(b string) string {
				return regexp.MustCompile(`(?m)^- \[`+id+`\] .*\n`).ReplaceAllString(b, "")
			})
			asMemctl(s, "consolidate: lost an entry", path)
		}},
		{"id-reuse", func(s *sim) {
			path, id, text := anEntry(s)
			edit(s, path, func(b string) string {
				return strings.Replace(b, "["+id+"] "+text, "["+id+"] The zebra cluster runs release 4242", 1)
			})
			asMemctl(s, "consolidate: reused an id", path)
		}},
		{"state-regress", func(s *sim) {
			edit(s, mdmem.StatePath, func(b string) string {
				return regexp.MustCompile(`": [0-9]+`).ReplaceAllString(b, `": 0`)
			})
			asMemctl(s, "consolidate: state", mdmem.StatePath)
		}},
		{"stray-committed", func(s *sim) {
			if err := os.WriteFile(filepath.Join(s.dir, "topics", ".notes.md.swp"), []byte("swap"), 0o600); err != nil {
				s.t.Fatal(err)
			}
			asMemctl(s, "hand edit: topics", "topics/.notes.md.swp")
		}},
		{"invented", func(s *sim) {
			path, id, text := anEntry(s)
			edit(s, path, func(b string) string {
				return strings.Replace(b, "["+id+"] "+text, "["+id+"] "+text+" and Zorblax", 1)
			})
			asMemctl(s, "consolidate: compress", path)
		}},
		{"category-lost", func(s *sim) {
			// A text given again in another category is its own entry;
			// a write that folds it into the first category's loses it.
			s.addRefiled()
			s.do("consolidate")
			s.check(true)
			for text, cat := range s.catOf {
				for _, e := range s.workEntries() {
					if norm(e.Content) == norm(text) && e.Category == cat {
						edit(s, e.File, func(b string) string { return strings.Replace(b, e.Raw, "", 1) })
						asMemctl(s, "consolidate: merged across categories", e.File)
					}
				}
			}
		}},
		{"stale-lock", func(s *sim) {
			// An index.lock that is not a killed memctl's (no marker of
			// memctl's is the same file) makes the person's git fail.
			lock := filepath.Join(s.dir, ".git", "index.lock")
			if err := os.WriteFile(lock, nil, 0o644); err != nil {
				s.t.Fatal(err)
			}
			s.do("person-checkout")
			os.Remove(lock)
		}},
		{"recovery-truth", func(s *sim) {
			// A recovery that says it finished a forget whose ref never
			// moved (killed after its journal).
			_, id, _ := anEntry(s)
			s.memctlEnv(nil, []string{mdmem.FailpointEnv + "=" + mdmem.FailTxnJournaled}, "forget", id, "--reason", "sim")
			s.journal = s.readJournal()
			if s.journal == nil {
				s.t.Fatal("no journal after a forget killed after its journal")
			}
			os.Remove(filepath.Join(s.dir, filepath.FromSlash(mdmem.TxnDir), "journal.json"))
			s.stepOut = []string{"memctl: recovered: finished \"" + s.journal.Op + "\" (commit " + s.journal.Commit[:12] + ")"}
		}},
		{"candidate-lost", func(s *sim) {
			s.do("add")
			ents, _ := os.ReadDir(filepath.Join(s.dir, filepath.FromSlash(mdmem.QueueDir)))
			for _, e := range ents {
				if strings.HasSuffix(e.Name(), ".json") {
					os.Remove(filepath.Join(s.dir, filepath.FromSlash(mdmem.QueueDir), e.Name()))
				}
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.check, func(t *testing.T) {
			s := newSim(t, bin, 7, []string{"add", "add-batch", "consolidate"}, []string{"add"}, map[string]bool{})
			s.run(12)
			if t.Failed() {
				t.Fatal("the ordinary steps failed")
			}
			for range 3 {
				s.do("add")
			}
			s.do("consolidate")
			s.check(true)
			var caught []string
			s.caught = &caught
			tt.sabotage(s)
			s.check(true)
			if !slices.Contains(caught, tt.check) {
				t.Errorf("sabotage went unnoticed by %q (caught: %v)", tt.check, caught)
			}
		})
	}
}

// TestSimulationPersonMeetsAKilledMemctlsLock: soak seed 420024. memctl
// killed (kill -9) while it held .git/index.lock for its commit leaves the
// lock, as a killed git does, and the person's `git checkout -- .` fails
// until memctl's next run removes it. The simulation takes that for what
// it is (no violation), and memctl's next write removes the lock, so the
// person's git works again.
func TestSimulationPersonMeetsAKilledMemctlsLock(t *testing.T) {
	if testing.Short() {
		t.Skip("simulation skipped in -short mode")
	}
	s := newSim(t, simBinary(t), 7, []string{"add", "add-batch", "consolidate"}, []string{"add"}, map[string]bool{})
	s.run(6)
	var caught []string
	s.caught = &caught
	// What gitstore's acquireLock leaves: its marker, hard-linked as the
	// lock.
	marker := filepath.Join(s.dir, ".git", "memctl-locks", "index")
	lock := filepath.Join(s.dir, ".git", "index.lock")
	if err := os.MkdirAll(filepath.Dir(marker), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(marker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(marker, lock); err != nil {
		t.Fatal(err)
	}
	if d := s.do("person-checkout"); !strings.Contains(d, "failed (the index.lock of a killed memctl)") {
		t.Fatalf("person-checkout with memctl's stale lock: %s", d)
	}
	s.do("add")
	s.check(true)
	if _, err := os.Stat(lock); err == nil {
		t.Fatal("memctl's next write left its stale index.lock")
	}
	if d := s.do("person-checkout"); strings.Contains(d, "failed") {
		t.Fatalf("person-checkout after memctl's next write: %s", d)
	}
	s.check(true)
	if len(caught) > 0 {
		t.Errorf("violations: %v", caught)
	}
}
