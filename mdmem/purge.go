package mdmem

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
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
	prefix := s.Repo.Prefix()
	memRel := func(p string) (string, bool) {
		if prefix == "" {
			return p, true
		}
		return strings.CutPrefix(p, prefix+"/")
	}
	isMemFile := func(p string) bool {
		rel, ok := memRel(p)
		return ok && (rel == MainFile || isTopicPath(rel))
	}
	texts := map[string]bool{}
	for _, c := range extra {
		texts[c] = true
	}
	err = s.Repo.HistoryBlobs(ctx, isMemFile, func(p string, data []byte) error {
		rel, _ := memRel(p)
		for _, e := range ParseDoc(rel, data).Entries {
			if want[e.ID] {
				texts[e.Content] = true
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var needles [][]byte
	for t := range texts {
		if t = strings.TrimSpace(t); t != "" {
			needles = append(needles, []byte(t))
		}
	}
	// Longest first, so a text containing another is replaced whole.
	sort.Slice(needles, func(i, j int) bool { return len(needles[i]) > len(needles[j]) })
	scrub := func(b []byte) ([]byte, bool) {
		changed := false
		for _, n := range needles {
			if bytes.Contains(b, n) {
				b = bytes.ReplaceAll(b, n, []byte(purgeReplacement))
				changed = true
			}
		}
		return b, changed
	}
	rw := gitstore.Rewrite{
		Blob: func(p string, data []byte) ([]byte, bool) {
			changed := false
			if isMemFile(p) {
				rel, _ := memRel(p)
				var out []byte
				pos := 0
				for _, e := range ParseDoc(rel, data).Entries {
					if want[e.ID] && e.Start >= pos {
						out = append(out, data[pos:e.Start]...)
						pos, changed = e.End, true
					}
				}
				if changed {
					data = append(out, data[pos:]...)
				}
			}
			data, sc := scrub(data)
			return data, changed || sc
		},
		Message: func(msg string) (string, bool) {
			b, changed := scrub([]byte(msg))
			return string(b), changed
		},
	}
	rr, err := s.Repo.RewriteHistory(ctx, rw, s.Signature(), s.now())
	if err != nil {
		return nil, err
	}
	if err := s.Repo.PurgeUnreachable(ctx); err != nil {
		return nil, fmt.Errorf("history rewritten (%d commits), but removing the old objects failed: %w", rr.Commits, err)
	}
	hits, n, err := s.Repo.ObjectsHolding(ctx, needles)
	if err != nil {
		return nil, err
	}
	if len(hits) > 0 {
		return nil, fmt.Errorf("history rewritten, but %d of %d objects in %s still hold the text (%s): %w",
			len(hits), n, path.Base(s.Repo.GitDir()), strings.Join(hits, ", "), ErrPurgeIncomplete)
	}
	files, err := s.Repo.FilesHolding(needles)
	if err != nil {
		return nil, err
	}
	if len(files) > 0 {
		return nil, fmt.Errorf("history rewritten and no object holds the text, but these files of %s still do: %s (edit or delete them): %w",
			path.Base(s.Repo.GitDir()), strings.Join(files, ", "), ErrPurgeIncomplete)
	}
	return &PurgeResult{RewriteResult: rr, Versions: len(needles), Objects: n, CannotReach: PurgeCannotReach}, nil
}

// ErrForeignRefs is returned (wrapped) by PurgeHistory when refs memctl
// does not rewrite (remote-tracking branches, the stash) hold the text.
var ErrForeignRefs = gitstore.ErrForeignRefs

// ErrPurgeIncomplete is returned (wrapped) when objects still hold a
// purged text after the purge.
var ErrPurgeIncomplete = errors.New("purge incomplete")
