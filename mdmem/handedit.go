package mdmem

import (
	"context"
	"errors"
	"io/fs"
	"strings"

	"github.com/memctl/memctl/mdmem/gitstore"
)

// CommitHandEdits records uncommitted changes a person made to memory files
// as their own commit, authored by the person when git knows them. The
// caller holds the lock. It returns the hash, or "" if there was nothing.
func (s *Store) CommitHandEdits(ctx context.Context) (string, error) {
	changed, err := s.Repo.Changed(ctx, []string{MainFile, ConfigPath}, []string{TopicDir})
	if err != nil {
		return "", err
	}
	if len(changed) == 0 {
		return "", nil
	}
	ids, err := s.changedIDs(ctx, changed)
	if err != nil {
		return "", err
	}
	author, ok := s.Repo.PersonSignature()
	if !ok {
		author = gitstore.Signature{Name: "memctl (hand edit)", Email: s.Config.Git.AuthorEmail}
	}
	msg := CommitMessage{
		Subject: "hand edit: " + strings.Join(changed, ", "),
		Body:    "Uncommitted edits of memory files, recorded by memctl before it writes.",
		Op:      "hand-edit",
		Entries: ids,
	}
	text, err := s.message(msg)
	if err != nil {
		return "", err
	}
	return s.Repo.Commit(ctx, gitstore.CommitRequest{Paths: changed, Message: text, Author: author, When: s.Now()})
}

// changedIDs compares entries at HEAD and on disk for the changed files and
// returns the ids whose text differs.
func (s *Store) changedIDs(ctx context.Context, paths []string) ([]string, error) {
	var ids []string
	for _, p := range paths {
		if p != MainFile && !strings.HasPrefix(p, TopicDir+"/") {
			continue
		}
		old, _, err := s.Repo.ReadHead(ctx, p)
		if err != nil {
			return nil, err
		}
		cur, err := ReadMemoryFile(s.Dir, p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		ids = append(ids, diffIDs(ParseDoc(p, old), ParseDoc(p, cur))...)
	}
	return ids, nil
}

// diffIDs returns ids added, removed or changed between two versions.
func diffIDs(a, b *Doc) []string {
	before := map[string]string{}
	for _, e := range a.Entries {
		before[e.ID] = e.Raw
	}
	var ids []string
	for _, e := range b.Entries {
		if raw, ok := before[e.ID]; !ok || raw != e.Raw {
			ids = append(ids, e.ID)
		}
		delete(before, e.ID)
	}
	for id := range before {
		ids = append(ids, id)
	}
	return uniqueSorted(ids)
}
