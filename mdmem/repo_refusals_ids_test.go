package mdmem

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/memctl/memctl/mdmem/gitstore"
)

// TestSparseCheckoutInWorktreeConfigIsRefused: `git sparse-checkout set`
// (git >= 2.25) turns on extensions.worktreeConfig and writes
// core.sparseCheckout into .git/config.worktree, not .git/config. memctl
// refuses sparse checkouts, but only looks in .git/config, so it opens the
// repository, takes the topic file that sparse checkout left out of the
// worktree (skip-worktree) for one "deleted by hand", and commits its
// deletion under the person's name.
func TestSparseCheckoutInWorktreeConfigIsRefused(t *testing.T) {
	ctx := context.Background()
	s := handEditStore(t)
	gitOut(t, s.Dir, "sparse-checkout", "set", "--no-cone", "/MEMORY.md", "/.memctl/", "/.gitignore")
	if out := gitOut(t, s.Dir, "ls-files", "-v", "topics/db.md"); !strings.HasPrefix(out, "S ") {
		t.Fatalf("setup: topics/db.md not skip-worktree: %q", out)
	}
	head := gitOut(t, s.Dir, "rev-parse", "HEAD")
	s2, err := Open(ctx, s.Dir)
	if err != nil {
		if errors.Is(err, gitstore.ErrUnsupported) {
			return // refused, as for core.sparseCheckout in .git/config
		}
		t.Fatalf("Open: %v", err)
	}
	s2.Now = s.Now
	unlock, err := s2.Lock(ctx)
	must(t, err)
	defer unlock()
	_, err = s2.CommitHandEdits(ctx)
	if errors.Is(err, gitstore.ErrUnsupported) {
		return
	}
	if err != nil {
		t.Fatalf("CommitHandEdits: %v", err)
	}
	if got := gitOut(t, s.Dir, "rev-parse", "HEAD"); got != head {
		t.Errorf("memctl committed in a sparse checkout:\n%s", gitOut(t, s.Dir, "log", "--stat", "--format=%an: %s", head+"..HEAD"))
	}
	if out := gitOut(t, s.Dir, "ls-tree", "--name-only", "HEAD", "topics/"); out != "topics/db.md" {
		t.Errorf("topics/db.md gone from HEAD (ls-tree: %q)", out)
	}
}

// TestFilterThroughAnAttributeMacroIsRefused: a clean filter (git-crypt, LFS)
// on memory files is refused when .gitattributes names it directly
// (`*.md filter=crypt`), but not when it comes through an attribute macro
// (`[attr]secret filter=crypt` then `*.md secret`), which git expands in
// the top-level .gitattributes. memctl then commits the worktree bytes
// unfiltered: for git-crypt, the plaintext of a file the person meant to
// be stored encrypted.
func TestFilterThroughAnAttributeMacroIsRefused(t *testing.T) {
	ctx := context.Background()
	s := handEditStore(t)
	writeRel(t, s, ".gitattributes", "[attr]secret filter=crypt diff=crypt\n*.md secret\n")
	// a stand-in for git-crypt: the stored form is upper case
	gitOut(t, s.Dir, "config", "filter.crypt.clean", "tr a-z A-Z")
	gitOut(t, s.Dir, "config", "filter.crypt.smudge", "cat")
	gitOut(t, s.Dir, "config", "filter.crypt.required", "true")
	gitOut(t, s.Dir, "add", ".gitattributes")
	gitOut(t, s.Dir, "commit", "-qm", "attributes")
	if out := gitOut(t, s.Dir, "check-attr", "filter", "MEMORY.md"); !strings.HasSuffix(out, ": crypt") {
		t.Fatalf("setup: git check-attr filter MEMORY.md = %q", out)
	}
	writeRel(t, s, MainFile, strings.Replace(baseMain, "Prefers tabs", "Prefers tabs, secretly", 1))
	unlock, err := s.Lock(ctx)
	must(t, err)
	defer unlock()
	_, err = s.CommitHandEdits(ctx)
	if errors.Is(err, gitstore.ErrUnsupported) {
		return // refused, as for a direct filter= attribute
	}
	if err != nil {
		t.Fatalf("CommitHandEdits: %v", err)
	}
	committed := gitOut(t, s.Dir, "rev-parse", "HEAD:MEMORY.md")
	wantBlob := gitOut(t, s.Dir, "hash-object", "--path", "MEMORY.md", "MEMORY.md")
	if committed != wantBlob {
		t.Errorf("MEMORY.md committed unfiltered (blob %s, git would store %s); stored text:\n%s",
			committed, wantBlob, gitOut(t, s.Dir, "cat-file", "-p", "HEAD:MEMORY.md"))
	}
}

// TestRestoreAndRenumberNeverHandOutOneID: an entry a person committed
// with git (or pulled from another clone) that no memctl run has seen yet
// raises no id mark. When the person's next edit both deletes it and copies
// another line, finishHandEdit restores the deleted id into the archive and
// gives the copy a "fresh" id from marks that ignore the restored one: the
// same id, so the fix-up commit itself creates a duplicate id.
func TestRestoreAndRenumberNeverHandOutOneID(t *testing.T) {
	ctx := context.Background()
	s := handEditStore(t)
	withDec2 := strings.Replace(baseMain, "- [dec-001] Postgres for orders (review · 2026-01-03)\n",
		"- [dec-001] Postgres for orders (review · 2026-01-03)\n- [dec-002] Kafka for events (person · 2026-01-05)\n", 1)
	writeRel(t, s, MainFile, withDec2)
	gitOut(t, s.Dir, "commit", "-qam", "person: add dec-002")
	// next edit: dec-002 deleted, dec-001's line copied (a pasted line)
	edited := strings.Replace(withDec2, "- [dec-002] Kafka for events (person · 2026-01-05)\n",
		"- [dec-001] Postgres for orders (review · 2026-01-03)\n", 1)
	writeRel(t, s, MainFile, edited)
	he := commitHandEdits(t, s)
	t.Logf("restored %v, renumbered %v", he.Restored, he.Renumbered)
	m, err := s.Load(ctx)
	must(t, err)
	if err := m.CheckUniqueIDs(); err != nil {
		t.Errorf("after memctl's fix-up commit: %v\n%s", err, readRel(t, s, MainFile))
	}
}
