package mdmem

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/memctl/memctl/mdmem/gitstore"
)

// ancestrySearch bounds how far back recovery looks for an interrupted
// write's commit under HEAD.
const ancestrySearch = 10000

// journalState says where an interrupted write's commit is.
type journalState int

const (
	notLanded journalState = iota // the ref never moved
	movedOff                      // the ref moved, then a git command moved it off
	atHead                        // HEAD is the commit
	underHead                     // commits were made on top of it
)

func (s *Store) stateOf(ctx context.Context, j *txnJournal) (journalState, string, error) {
	head, err := s.Repo.HeadHash(ctx)
	if err != nil {
		return 0, "", err
	}
	if head == j.Commit {
		return atHead, head, nil
	}
	under, err := s.Repo.IsAncestor(ctx, j.Commit, head, ancestrySearch)
	if err != nil {
		return 0, head, err
	}
	switch {
	case under:
		return underHead, head, nil
	case s.Repo.ReflogHas(j.Ref, j.Commit):
		return movedOff, head, nil
	}
	return notLanded, head, nil
}

// recoverTxn finishes the write a killed process left (see the order at
// the top). The caller holds the lock. It returns what it did, for the
// person: always true, never "finished" unless it is.
func (s *Store) recoverTxn(ctx context.Context) ([]string, error) {
	var notes []string
	j, err := readJournalIn(s.Dir, journalName)
	if err != nil {
		return nil, fmt.Errorf("%w; move it away to go on (memctl then treats the files as they are)", err)
	}
	if j != nil {
		note, err := s.recoverJournal(ctx, j)
		if err != nil {
			return nil, err
		}
		notes = append(notes, note)
	}
	p, err := readJournalIn(s.Dir, purgeName)
	if err != nil {
		return notes, fmt.Errorf("%w; move it away to go on", err)
	}
	if p != nil {
		notes = append(notes, s.finishOwedPurge(ctx, p))
	}
	return notes, nil
}

// recoverJournal rolls an interrupted write forward, or says it did not
// happen.
func (s *Store) recoverJournal(ctx context.Context, j *txnJournal) (string, error) {
	state, head, err := s.stateOf(ctx, j)
	if err != nil {
		return "", err
	}
	switch state {
	case notLanded:
		s.removeJournal(journalName)
		note := fmt.Sprintf("%q was interrupted before it took effect: nothing of it was written; run it again", j.Op)
		if len(j.Consumed) > 0 {
			note += " (its candidates are still queued: the next consolidate applies them)"
		}
		return note, nil
	case movedOff:
		s.removeJournal(journalName)
		return fmt.Sprintf("%q took effect (commit %.12s), then a git command moved %s off it; memctl left the branch and the files as they are",
			j.Op, j.Commit, strings.TrimPrefix(j.Ref, "refs/heads/")), nil
	}
	unlockApply, err := s.lockApply(true)
	if err != nil {
		return "", err
	}
	defer unlockApply()
	target := ""
	if state == underHead {
		target = head
	}
	steps, err := s.planCheckout(ctx, j, target)
	var edited *EditedError
	if errors.As(err, &edited) && s.settle != RecoverStatus {
		unlockApply()
		return s.settleEdited(ctx, j, edited)
	}
	if err != nil {
		return "", err
	}
	if err := s.applyCheckout(ctx, steps, false); err != nil {
		return "", fmt.Errorf("finish %q: %w", j.Op, err)
	}
	var touched, merged, onTop []string
	for _, st := range steps {
		if st.write {
			touched = append(touched, st.path)
		}
		if st.merged {
			merged = append(merged, st.path)
		}
	}
	if err := s.finishJournalKeep(ctx, j); err != nil {
		return "", err
	}
	if state == underHead {
		// Commits made on top of the write: where they took its change
		// back (a `git commit -a` of the files it had not updated yet),
		// memctl's change is committed again on top of them.
		if onTop, err = s.reapplyOnTop(ctx, j, head); err != nil {
			return "", fmt.Errorf("finish %q on top of %.12s: %w", j.Op, head, err)
		}
	}
	if err := s.syncIndexOf(ctx, j, head); err != nil {
		return "", fmt.Errorf("finish %q: %w", j.Op, err)
	}
	s.removeJournal(journalName)
	note := fmt.Sprintf("finished %q (commit %.12s), interrupted after its commit", j.Op, j.Commit)
	if len(touched) > 0 {
		note += ": brought " + strings.Join(touched, ", ") + " up to date"
	}
	if len(merged) > 0 {
		note += "; your edits since in " + strings.Join(merged, ", ") + " are kept, merged with it, to be committed as your hand edit"
	}
	if len(onTop) > 0 {
		note += fmt.Sprintf("; commits made since (up to %.12s) had taken its change out of %s: memctl committed it again on top", head, strings.Join(onTop, ", "))
	}
	if j.Forget != nil {
		note += "; the queue, kept transcripts and caches no longer hold the forgotten text"
	}
	return note, nil
}

// syncIndexOf records in the index, for an interrupted write's paths, the
// blobs HEAD now has, where the index holds one of the write's own blobs
// (or the blob of head, the HEAD recovery found): a person's staged
// content stays.
func (s *Store) syncIndexOf(ctx context.Context, j *txnJournal, head string) error {
	now, err := s.Repo.HeadHash(ctx)
	if err != nil {
		return err
	}
	changes := make([]gitstore.Change, 0, len(j.Files))
	keep := map[string][]string{}
	for _, f := range j.Files {
		hb, err := s.Repo.BlobAt(ctx, now, f.Path)
		if err != nil {
			return err
		}
		was, err := s.Repo.BlobAt(ctx, head, f.Path)
		if err != nil {
			return err
		}
		changes = append(changes, gitstore.Change{Path: f.Path, Old: f.Old, New: hb, Mode: f.Mode})
		keep[f.Path] = []string{f.Old, f.New, hb, was}
	}
	return s.Repo.SyncIndex(ctx, changes, keep)
}

// finishJournalKeep is finishJournal without removing the journal.
func (s *Store) finishJournalKeep(ctx context.Context, j *txnJournal) error {
	s.raiseMarksOf(ctx, j)
	if err := s.dequeue(ctx, j.Consumed); err != nil {
		return err
	}
	if j.Forget != nil {
		c, err := s.cleanAfterForget(ctx, j.Forget)
		if err != nil {
			return err
		}
		s.cleaned = c
	}
	if j.Purge {
		return s.writeJournal(ctx, purgeName, j)
	}
	return nil
}

// reapplyOnTop commits memctl's change of an interrupted write again on
// top of head, for the files whose content at head lacks it (the
// worktree already holds it, planCheckout having merged it in). It
// returns the files so committed.
func (s *Store) reapplyOnTop(ctx context.Context, j *txnJournal, head string) ([]string, error) {
	files := map[string][]byte{}
	var paths []string
	for _, f := range j.Files {
		hb, err := s.Repo.BlobAt(ctx, head, f.Path)
		if err != nil {
			return nil, err
		}
		if hb == f.New {
			continue
		}
		merged, ok, err := s.mergeBlobs(ctx, f.Path, f.Old, f.New, hb)
		if err != nil || !ok {
			return nil, err
		}
		if h, err := s.Repo.BlobHash(f.Path, merged); err != nil || h == hb {
			continue
		}
		files[f.Path] = merged
		paths = append(paths, f.Path)
	}
	if len(files) == 0 {
		return nil, nil
	}
	return paths, s.commitOnTop(ctx, head, files, CommitMessage{
		Subject: "recover: " + j.Op + " again, on top of later commits",
		Body: fmt.Sprintf("%q was committed (%.12s) but interrupted before it updated the files; commits made since (up to %.12s) took its change out of %s. This commit puts it back.",
			j.Op, j.Commit, head, strings.Join(paths, ", ")),
		Op: "recover",
	})
}

// commitOnTop commits files, which recovery has already brought the
// worktree to (a person's edits merged in stay theirs), on top of head,
// through its own journal record (the caller removes it).
func (s *Store) commitOnTop(ctx context.Context, head string, files map[string][]byte, msg CommitMessage) error {
	text, err := s.message(msg)
	if err != nil {
		return err
	}
	prep, err := s.Repo.Prepare(ctx, gitstore.PrepareRequest{Base: head, Files: files, Message: text, Author: s.Signature(), When: s.now()})
	if err != nil || prep == nil {
		return err
	}
	j2 := &txnJournal{Op: prep.Subject, Ref: prep.Ref, Parent: prep.Parent, Commit: prep.Commit, Files: prep.Changes}
	return s.Repo.Land(ctx, prep, gitstore.LandSteps{
		Journal: func() error { return s.writeJournal(ctx, journalName, j2) },
		Checkout: func() error {
			steps, err := s.planCheckout(ctx, j2, "")
			if err != nil {
				return err
			}
			return s.applyCheckout(ctx, steps, false)
		},
	})
}

// finishOwedPurge reports a history purge a forget asked for that did
// not finish (killed, or refused): the text is still in git history, and
// `memctl forget <ids> --purge-history` finishes it. It stays owed until
// that succeeds, unless the forget's commit is not on the branch.
func (s *Store) finishOwedPurge(ctx context.Context, p *txnJournal) string {
	var ids []string
	if p.Forget != nil {
		ids = p.Forget.IDs
	}
	if state, _, err := s.stateOf(ctx, p); err == nil && (state == notLanded || state == movedOff) {
		s.removeJournal(purgeName)
		return fmt.Sprintf("dropped the history purge owed by %q: its commit is not on the branch", p.Op)
	}
	return fmt.Sprintf("%q took effect, but %s: the forgotten text is still in git history; run `memctl forget %s --purge-history` to finish it",
		p.Op, owedPurgeNote, strings.Join(ids, " "))
}

// owedPurgeNote is what the note of an owed purge says.
const owedPurgeNote = "the history purge it asked for did not finish"

// purgeOwed reports whether a purge is still owed.
func (s *Store) purgeOwed() bool {
	p, err := readJournalIn(s.Dir, purgeName)
	return err == nil && p != nil
}

// clearOwedPurge drops the owed purge once a purge of ids ran.
func (s *Store) clearOwedPurge(ids []string) {
	p, err := readJournalIn(s.Dir, purgeName)
	if err != nil || p == nil || p.Forget == nil {
		return
	}
	for _, id := range p.Forget.IDs {
		if !slices.Contains(ids, id) {
			return
		}
	}
	s.removeJournal(purgeName)
}

// RescueDir holds the versions of files a person edited that
// `memctl recover --discard-edits` replaced.
const RescueDir = CacheDir + "/rescued"

// RecoverChoice is how Recover settles an interrupted write whose files a
// person edited in a way that does not merge.
type RecoverChoice int

// The choices of Recover.
const (
	RecoverStatus RecoverChoice = iota // only report
	KeepEdits                          // the person's version stays, as their hand edit
	DiscardEdits                       // memctl's committed version, the person's saved
)

// Recover takes the lock (finishing what can be finished) and reports the
// state of an interrupted write; with KeepEdits or DiscardEdits it settles
// the files whose hand edits did not merge. It returns what it did.
func Recover(ctx context.Context, s *Store, choice RecoverChoice) ([]string, error) {
	if choice != RecoverStatus {
		s.settle = choice
	}
	unlock, err := s.Lock(ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	notes := append([]string(nil), s.Recovered...)
	if len(notes) == 0 {
		notes = append(notes, "no interrupted write: nothing to recover")
	}
	return notes, nil
}

// settleEdited resolves an *EditedError as s.settle asks: the person's
// files are kept (the journal is then finished without them) or replaced
// by memctl's version (saved first under RescueDir, and committed on top
// when a person's commit holds another). It settles once: a further
// conflict is returned.
func (s *Store) settleEdited(ctx context.Context, j *txnJournal, e *EditedError) (string, error) {
	choice := s.settle
	s.settle = RecoverStatus
	edited := map[string]bool{}
	for _, p := range e.Paths {
		edited[p] = true
	}
	rest := *j
	rest.Files = nil
	var settled []gitstore.Change
	for _, f := range j.Files {
		if edited[f.Path] {
			settled = append(settled, f)
		} else {
			rest.Files = append(rest.Files, f)
		}
	}
	if choice == KeepEdits {
		if err := s.writeJournal(ctx, journalName, &rest); err != nil {
			return "", err
		}
		note, err := s.recoverJournal(ctx, &rest)
		if err != nil {
			return "", err
		}
		if err := s.syncSettledIndex(ctx, settled); err != nil {
			return "", err
		}
		return note + "; your version of " + strings.Join(e.Paths, ", ") + " is kept as you wrote it, to be committed as your hand edit", nil
	}
	if err := EnsureDir(s.Dir, RescueDir); err != nil {
		return "", err
	}
	head, err := s.Repo.HeadHash(ctx)
	if err != nil {
		return "", err
	}
	var saved []string
	onTop := map[string][]byte{}
	for _, f := range settled {
		if b, err := ReadMemoryFile(s.Dir, f.Path); err == nil {
			name := RescueDir + "/" + strings.ReplaceAll(f.Path, "/", "__") + "." + s.now().UTC().Format("20060102T150405")
			if err := WriteFileAtomic(ctx, s.abs(name), b, PrivateFileMode); err != nil {
				return "", err
			}
			saved = append(saved, name)
		}
		data, err := s.blobOrNil(ctx, f.New)
		if err != nil {
			return "", err
		}
		if err := s.writeFile(ctx, f.Path, data); err != nil {
			return "", err
		}
		if hb, err := s.Repo.BlobAt(ctx, head, f.Path); err != nil {
			return "", err
		} else if hb != f.New {
			onTop[f.Path] = data
		}
	}
	if err := s.writeJournal(ctx, journalName, &rest); err != nil {
		return "", err
	}
	note, err := s.recoverJournal(ctx, &rest)
	if err != nil {
		return "", err
	}
	if len(onTop) > 0 {
		paths := slices.Sorted(maps.Keys(onTop))
		if head, err = s.Repo.HeadHash(ctx); err != nil {
			return "", err
		}
		unlockApply, err := s.lockApply(true)
		if err != nil {
			return "", err
		}
		defer unlockApply()
		if err := s.commitOnTop(ctx, head, onTop, CommitMessage{
			Subject: "recover: " + j.Op + ", memctl's version of " + strings.Join(paths, ", "),
			Body:    fmt.Sprintf("%q was committed (%.12s) but interrupted before it updated the files; commits made since conflict with it in %s. The person chose memctl's version (memctl recover --discard-edits); theirs is in the history.", j.Op, j.Commit, strings.Join(paths, ", ")),
			Op:      "recover",
		}); err != nil {
			return "", err
		}
		s.removeJournal(journalName)
		note += "; memctl's version of " + strings.Join(paths, ", ") + " committed again on top"
	}
	if err := s.syncSettledIndex(ctx, settled); err != nil {
		return "", err
	}
	if len(saved) > 0 {
		note += "; your edited version was saved as " + strings.Join(saved, ", ")
	}
	return note, nil
}

// syncSettledIndex records HEAD's blobs in the index for the files a
// settle took out of the journal (a person's staged content stays).
func (s *Store) syncSettledIndex(ctx context.Context, settled []gitstore.Change) error {
	head, err := s.Repo.HeadHash(ctx)
	if err != nil {
		return err
	}
	changes := make([]gitstore.Change, 0, len(settled))
	keep := map[string][]string{}
	for _, f := range settled {
		hb, err := s.Repo.BlobAt(ctx, head, f.Path)
		if err != nil {
			return err
		}
		changes = append(changes, gitstore.Change{Path: f.Path, Old: f.Old, New: hb, Mode: f.Mode})
		keep[f.Path] = []string{f.Old, f.New, hb}
	}
	return s.Repo.SyncIndex(ctx, changes, keep)
}
