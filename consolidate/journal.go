package consolidate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/memctl/memctl/mdmem"
)

// JournalPath is the intent journal of a run that is about to write: the
// full new content of every file and the commit message. A run that
// crashes after writing some files and before its commit is rolled
// forward from it by the next run (in .memctl/cache, never committed).
const JournalPath = ".memctl/cache/consolidate-journal.json"

type journal struct {
	Files    map[string][]byte   `json:"files"`
	Message  mdmem.CommitMessage `json:"message"`
	Consumed []string            `json:"consumed"`
}

func writeJournal(ctx context.Context, dir string, j *journal) error {
	b, err := json.Marshal(j)
	if err != nil {
		return err
	}
	p := filepath.Join(dir, filepath.FromSlash(JournalPath))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return mdmem.WriteFileAtomic(ctx, p, b, 0o644)
}

func removeJournal(dir string) error {
	p := filepath.Join(dir, filepath.FromSlash(JournalPath))
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return mdmem.SyncDir(filepath.Dir(p))
}

// recoverJournal finishes an interrupted run. The caller holds the lock.
//   - its commit landed (HEAD holds every journaled file): drop the journal;
//   - files are each either as at HEAD or as journaled: write the rest and
//     commit (roll forward: the same tree a run without the crash makes);
//   - a file is neither (a person edited it since): restore the ledger and
//     state files to HEAD so its candidates are processed again (dedupe
//     folds what already landed), keep the person's files, drop the journal.
func recoverJournal(ctx context.Context, s *mdmem.Store) (string, error) {
	b, err := readFileIfExists(filepath.Join(s.Dir, filepath.FromSlash(JournalPath)))
	if err != nil || b == nil {
		return "", err
	}
	var j journal
	if err := json.Unmarshal(b, &j); err != nil || len(j.Files) == 0 {
		return "discarded an unreadable journal of an interrupted run (it had not started writing)", removeJournal(s.Dir)
	}
	committed, rollable := true, true
	for p, want := range j.Files {
		head, _, err := s.Repo.ReadHead(ctx, p)
		if err != nil {
			return "", err
		}
		if !bytes.Equal(head, want) {
			committed = false
		}
		disk, err := readFileIfExists(filepath.Join(s.Dir, filepath.FromSlash(p)))
		if err != nil {
			return "", err
		}
		if !bytes.Equal(disk, want) && !bytes.Equal(disk, head) {
			rollable = false
		}
	}
	switch {
	case committed:
		return "an interrupted run had committed; finished its dequeue", removeJournal(s.Dir)
	case rollable:
		if _, err := s.Write(ctx, j.Files, j.Message); err != nil {
			return "", fmt.Errorf("roll forward an interrupted run: %w", err)
		}
		return fmt.Sprintf("rolled forward an interrupted run (%d candidates)", len(j.Consumed)), removeJournal(s.Dir)
	}
	restore := map[string][]byte{}
	for p := range j.Files {
		if p == mdmem.StatePath || filepath.ToSlash(filepath.Dir(p)) == LedgerDir {
			head, ok, err := s.Repo.ReadHead(ctx, p)
			if err != nil {
				return "", err
			}
			if ok {
				restore[p] = head
			} else {
				restore[p] = nil
			}
		}
	}
	for p, data := range restore {
		full := filepath.Join(s.Dir, filepath.FromSlash(p))
		if data == nil {
			if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return "", err
			}
			continue
		}
		if err := mdmem.WriteFileAtomic(ctx, full, data, 0o644); err != nil {
			return "", err
		}
	}
	return "an interrupted run's files were edited by hand since; kept the edits, its candidates are processed again", removeJournal(s.Dir)
}
