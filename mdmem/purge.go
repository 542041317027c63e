package mdmem

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/memctl/memctl/mdmem/gitstore"
)

// PurgeResult is what PurgeHistory did.
type PurgeResult struct {
	*gitstore.RewriteResult
	// Versions counts the distinct texts the ids held in history (each
	// purged).
	Versions int `json:"versions"`
	// Objects is how many objects the final check read; none holds a
	// purged text.
	Objects int `json:"objects_checked"`
	// CannotReach lists the copies a purge does not touch.
	CannotReach []string `json:"cannot_reach"`
}

// purgeReplacement stands in for a purged text found outside its entry.
const purgeReplacement = "[forgotten]"

// PurgeCannotReach names the copies of a memory that --purge-history does
// not reach.
var PurgeCannotReach = []string{
	"remotes: a pushed branch keeps the text until you force-push (git push --force) and the host drops its own copies (pull-request refs, caches)",
	"clones and forks: every other clone still has the old commits; re-clone them, and never push from an old clone (it would bring the text back)",
	"backups and snapshots of this directory (file backups, filesystem snapshots, editor swap and undo files)",
	"anything the text was sent to: LLM providers' logs, terminal scrollback, CI logs",
}

// CheckPurgeable refuses a history purge the repository is not ready for:
// tracked files with uncommitted changes (worktree or index) or a git
// operation in progress. Memory files with hand edits are not counted: a
// forget commits them first.
func CheckPurgeable(ctx context.Context, s *Store) error {
	dirty, err := s.Repo.Dirty(ctx)
	if err != nil {
		return err
	}
	var other []string
	for _, p := range dirty {
		rel, ok := strings.CutPrefix(p, s.Repo.Prefix()+"/")
		if s.Repo.Prefix() == "" {
			rel, ok = p, true
		}
		if ok && (rel == MainFile || isTopicPath(rel)) {
			continue
		}
		other = append(other, p)
	}
	if len(other) > 0 {
		return fmt.Errorf("refusing to rewrite history: the worktree is not clean (%s); commit or stash these changes first", strings.Join(other, ", "))
	}
	return nil
}

func isTopicPath(rel string) bool {
	return strings.HasPrefix(rel, TopicDir+"/") && strings.HasSuffix(rel, ".md") && strings.Count(rel, "/") == 1
}

// PurgeHistory rewrites the history of the memory's repository so that no
// commit holds the forgotten entries ids (which must have tombstones):
// every version of those entries is cut from every memory file of every
// commit, any other occurrence of their texts (in other files or commit
// messages) becomes "[forgotten]", commits before the first change keep
// their hashes, and ids stay as they are. It then expires the reflogs,
// deletes the unreachable objects (loose and packed) and checks that no
// object of the repository (nor any other file of the git directory: the
// last commit message file is removed) still holds any of the texts. extra are texts
// known to the caller (a forget that just ran). It refuses on a dirty
// worktree, and when refs it does not rewrite (remote-tracking branches,
// the stash) hold the text. It takes the lock.
func PurgeHistory(ctx context.Context, s *Store, ids, extra []string) (*PurgeResult, error) {
	if err := CheckPurgeable(ctx, s); err != nil {
		return nil, err
	}
	unlock, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	res, err := s.purgeLocked(ctx, ids, extra)
	if err == nil {
		// This purge is the one a note of Lock's says is owed.
		s.Recovered = slices.DeleteFunc(s.Recovered, func(n string) bool { return strings.Contains(n, owedPurgeNote) && !s.purgeOwed() })
	}
	return res, err
}

// purgeLocked is PurgeHistory with the lock held. Once it succeeded, a
// purge these ids owed (an interrupted forget --purge-history) is no
// longer owed.
func (s *Store) purgeLocked(ctx context.Context, ids, extra []string) (*PurgeResult, error) {
	want, err := s.purgeIDs(ids)
	if err != nil {
		return nil, err
	}
	pu := &purger{prefix: s.Repo.Prefix(), want: want}
	if err := pu.findTexts(ctx, s, extra); err != nil {
		return nil, err
	}
	// A memory that syncs keeps the remote's commits under refs memctl
	// does not rewrite; they are the remote's copy, which only `memctl
	// sync --publish-purge` replaces: set aside here (the commit each
	// remote is at is kept as a lease, a hash), so they keep nothing.
	if err := s.leaveSyncedRemotes(ctx); err != nil {
		return nil, err
	}
	rr, err := s.Repo.RewriteHistory(ctx, pu.rewrite(), s.Signature(), s.now())
	if err != nil {
		return nil, err
	}
	if err := s.Repo.PurgeUnreachable(ctx); err != nil {
		return nil, fmt.Errorf("history rewritten (%d commits), but removing the old objects failed: %w", rr.Commits, err)
	}
	n, err := s.verifyPurged(ctx, pu.needles)
	if err != nil {
		return nil, err
	}
	s.clearOwedPurge(ids)
	return &PurgeResult{RewriteResult: rr, Versions: len(pu.needles), Objects: n, CannotReach: PurgeCannotReach}, nil
}

// purgeIDs returns the set of ids to purge, refusing an id without a
// tombstone (not forgotten).
func (s *Store) purgeIDs(ids []string) (map[string]bool, error) {
	ts, err := s.LoadTombstones()
	if err != nil {
		return nil, err
	}
	all, err := ts.All()
	if err != nil {
		return nil, err
	}
	want := map[string]bool{}
	for _, id := range ids {
		found := false
		for _, t := range all {
			found = found || t.ID == id
		}
		if !found {
			return nil, fmt.Errorf("%s is not forgotten: run memctl forget %s --purge-history", id, id)
		}
		want[id] = true
	}
	return want, nil
}

// purger cuts the entries of the ids in want from the memory files of
// every commit (the memory is at prefix in the repository) and replaces
// any other occurrence of their texts (needles) by purgeReplacement.
type purger struct {
	prefix  string
	want    map[string]bool
	needles [][]byte
}

// memRel returns the memory-relative path of repository path p; ok is
// false outside the memory.
func (pu *purger) memRel(p string) (string, bool) {
	if pu.prefix == "" {
		return p, true
	}
	return strings.CutPrefix(p, pu.prefix+"/")
}

// isMemFile says whether repository path p is a memory file (MEMORY.md or
// a topic file).
func (pu *purger) isMemFile(p string) bool {
	rel, ok := pu.memRel(p)
	return ok && (rel == MainFile || isTopicPath(rel))
}

// findTexts collects every text the entries to purge had in any version
// of any memory file, plus extra, as the needles, longest first (so a
// text containing another is replaced whole).
func (pu *purger) findTexts(ctx context.Context, s *Store, extra []string) error {
	texts := map[string]bool{}
	for _, c := range extra {
		texts[c] = true
	}
	err := s.Repo.HistoryBlobs(ctx, pu.isMemFile, func(p string, data []byte) error {
		rel, _ := pu.memRel(p)
		for _, e := range ParseDoc(rel, data).Entries {
			if pu.want[e.ID] {
				texts[e.Content] = true
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for t := range texts {
		if t = strings.TrimSpace(t); t != "" {
			pu.needles = append(pu.needles, []byte(t))
		}
	}
	sort.Slice(pu.needles, func(i, j int) bool { return len(pu.needles[i]) > len(pu.needles[j]) })
	return nil
}

// scrub replaces every needle in b; changed says whether one was there.
func (pu *purger) scrub(b []byte) ([]byte, bool) {
	changed := false
	for _, n := range pu.needles {
		if bytes.Contains(b, n) {
			b = bytes.ReplaceAll(b, n, []byte(purgeReplacement))
			changed = true
		}
	}
	return b, changed
}

// rewrite is the history rewrite: memory files lose the entries to
// purge, and every blob and commit message is scrubbed.
func (pu *purger) rewrite() gitstore.Rewrite {
	return gitstore.Rewrite{
		Blob: func(p string, data []byte) ([]byte, bool) {
			changed := false
			if pu.isMemFile(p) {
				rel, _ := pu.memRel(p)
				var out []byte
				pos := 0
				for _, e := range ParseDoc(rel, data).Entries {
					if pu.want[e.ID] && e.Start >= pos {
						out = append(out, data[pos:e.Start]...)
						pos, changed = e.End, true
					}
				}
				if changed {
					data = append(out, data[pos:]...)
				}
			}
			data, sc := pu.scrub(data)
			return data, changed || sc
		},
		Message: func(msg string) (string, bool) {
			b, changed := pu.scrub([]byte(msg))
			return string(b), changed
		},
	}
}

// verifyPurged checks that no object and no other file of the git
// directory still holds a needle; n is the number of objects checked.
func (s *Store) verifyPurged(ctx context.Context, needles [][]byte) (n int, err error) {
	hits, n, err := s.Repo.ObjectsHolding(ctx, needles)
	if err != nil {
		return 0, err
	}
	if len(hits) > 0 {
		return 0, fmt.Errorf("history rewritten, but %d of %d objects in %s still hold the text (%s): %w",
			len(hits), n, path.Base(s.Repo.GitDir()), strings.Join(hits, ", "), ErrPurgeIncomplete)
	}
	files, err := s.Repo.FilesHolding(needles)
	if err != nil {
		return 0, err
	}
	if len(files) > 0 {
		return 0, fmt.Errorf("history rewritten and no object holds the text, but these files of %s still do: %s (edit or delete them): %w",
			path.Base(s.Repo.GitDir()), strings.Join(files, ", "), ErrPurgeIncomplete)
	}
	return n, nil
}

// ErrForeignRefs is returned (wrapped) by PurgeHistory when refs memctl
// does not rewrite (remote-tracking branches, the stash) hold the text.
var ErrForeignRefs = gitstore.ErrForeignRefs

// ErrPurgeIncomplete is returned (wrapped) when objects still hold a
// purged text after the purge.
var ErrPurgeIncomplete = errors.New("purge incomplete")
