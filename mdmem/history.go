package mdmem

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/memctl/memctl/mdmem/gitstore"
)

// Change kinds of an entry between a commit and its first parent.
const (
	ChangeAdded    = "added"    // the entry appeared
	ChangeChanged  = "changed"  // its content changed
	ChangeMoved    = "moved"    // it moved to another file or section
	ChangeArchived = "archived" // it moved into the archive
	ChangeMeta     = "metadata" // only its metadata changed (dates, refs, scope, …)
	ChangeRemoved  = "removed"  // it disappeared
	ChangeNamed    = "named"    // the commit names it but its line did not change
)

// EntryVersion is one commit in an entry's history: what the commit did to
// the entry and the entry's line after it (Line is "" when removed).
type EntryVersion struct {
	Commit  string
	Parent  string
	Author  gitstore.Signature
	When    time.Time
	Subject string
	Op      string // the Memctl-Op trailer ("consolidate", "hand-edit", …); "" for a person's own commit
	Change  string // one of the Change* kinds
	File    string // where the entry is after the commit ("" when removed)
	Section string
	Place   Place
	Content string
	Line    string // the entry's first line after the commit
	OldFile string // where it was before ("" when added)
	OldLine string // its first line before the commit
}

// EntryHistory returns what each commit did to entry id, newest first, at
// most limit versions (0 = all). It looks at the commits that name the id
// in a Memctl-Entry trailer and at commits memctl did not make (a person's
// `git commit`), and compares the entry's line with the commit's first
// parent, so every version of the text is listed with who changed it.
func (s *Store) EntryHistory(ctx context.Context, id string, limit int) ([]EntryVersion, error) {
	commits, err := s.Repo.Log(ctx, func(c *gitstore.Commit) bool {
		for _, v := range c.Trailers[TrailerEntry] {
			if TrailerNames(v, id) {
				return true
			}
		}
		return !memctlCommit(c)
	}, 0)
	if err != nil {
		return nil, err
	}
	var out []EntryVersion
	snaps := map[string]*gitstore.Snapshot{}
	at := func(commit string) (*gitstore.Snapshot, error) {
		if snap, ok := snaps[commit]; ok {
			return snap, nil
		}
		if commit == "" {
			return &gitstore.Snapshot{}, nil
		}
		snap, err := s.Repo.FilesAt(ctx, commit, isMemoryFilePath)
		if err != nil {
			return nil, err
		}
		snaps[commit] = snap
		return snap, nil
	}
	for _, c := range commits {
		after, err := at(c.Hash)
		if err != nil {
			return out, err
		}
		before, err := at(c.Parent)
		if err != nil {
			return out, err
		}
		now, old := findEntryIn(after, id), findEntryIn(before, id)
		change := entryChange(old, now)
		if change == "" {
			if !memctlCommit(c) {
				continue // a person's commit that left the entry alone
			}
			change = ChangeNamed
		}
		v := EntryVersion{
			Commit: c.Hash, Parent: c.Parent, Author: c.Author, When: c.When, Subject: c.Subject,
			Change: change,
		}
		if ops := c.Trailers[TrailerOp]; len(ops) > 0 {
			v.Op = ops[0]
		}
		if now != nil {
			v.File, v.Section, v.Place, v.Content, v.Line = now.File, now.Section, now.Place, now.Content, firstLine(now.Raw)
		}
		if old != nil {
			v.OldFile, v.OldLine = old.File, firstLine(old.Raw)
		}
		out = append(out, v)
		if limit > 0 && len(out) >= limit {
			break
		}
		// Only the newest snapshots are needed again (a commit's parent is
		// the next, older commit); drop the rest to keep memory flat.
		for k := range snaps {
			if k != c.Parent {
				delete(snaps, k)
			}
		}
	}
	return out, nil
}

// memctlCommit reports whether memctl made the commit (it carries one of
// memctl's trailers).
func memctlCommit(c *gitstore.Commit) bool {
	for k := range c.Trailers {
		if strings.HasPrefix(k, "Memctl-") {
			return true
		}
	}
	return false
}

// isMemoryFilePath keeps MEMORY.md and topics/<slug>.md (and lets the walk
// enter topics/).
func isMemoryFilePath(p string) bool {
	switch {
	case p == MainFile, p == TopicDir+"/":
		return true
	case strings.HasPrefix(p, TopicDir+"/"):
		rest := strings.TrimPrefix(p, TopicDir+"/")
		return strings.HasSuffix(rest, ".md") && !strings.Contains(rest, "/") && ValidSlug(strings.TrimSuffix(rest, ".md")) == nil
	}
	return false
}

// findEntryIn returns entry id in a snapshot, MEMORY.md first, or nil.
func findEntryIn(snap *gitstore.Snapshot, id string) *Entry {
	if snap == nil || len(snap.Files) == 0 {
		return nil
	}
	var paths []string
	for p := range snap.Files {
		if p != MainFile {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	if _, ok := snap.Files[MainFile]; ok {
		paths = append([]string{MainFile}, paths...)
	}
	needle := "[" + id + "]"
	for _, p := range paths {
		src := snap.Files[p]
		if !strings.Contains(string(src), needle) {
			continue
		}
		for _, e := range ParseDoc(p, src).Entries {
			if e.ID == id {
				return e
			}
		}
	}
	return nil
}

// entryChange classifies what happened to an entry between two versions
// ("" when nothing did).
func entryChange(old, now *Entry) string {
	switch {
	case old == nil && now == nil:
		return ""
	case old == nil:
		return ChangeAdded
	case now == nil:
		return ChangeRemoved
	case old.Content != now.Content:
		return ChangeChanged
	case now.Place == PlaceArchive && old.Place != PlaceArchive:
		return ChangeArchived
	case old.File != now.File || old.Section != now.Section:
		return ChangeMoved
	case firstLine(old.Raw) != firstLine(now.Raw):
		return ChangeMeta
	}
	return ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimRight(line, "\r")
}
