package mdmem

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/memctl/memctl/mdmem/gitstore"
)

// Every write of the memory (import, consolidate, forget, confirm, reject,
// a hand-edit commit and memctl's follow-up to it) is one Txn, in git's own
// order: the commit is the truth, the worktree follows it.
//
//  1. The caller plans on HEAD and the files as they are (hand edits are
//     committed first) and Puts the new contents, in memory.
//  2. Commit writes the blobs, trees and the commit object (fsynced), takes
//     index.lock, writes one journal record (the commit, its parent, and per
//     path the old and the new blob), and moves the branch from the parent
//     to the commit by compare-and-swap under <ref>.lock.
//  3. Only then are the working files replaced (temp file, fsync, rename)
//     and the index updated; then the candidates the commit consumed leave
//     the queue, a forget cleans what lies outside git, and the journal is
//     removed.
//
// A process killed at any point leaves the journal. The next writer
// (Store.Lock) decides by the ref alone: if the commit is not on the
// branch, the write did not happen and it says so; if it is, the write is
// rolled forward, path by path, by hash equality: a file holding the new
// blob is done, one holding the old blob gets the new one, anything else
// is a person's edit, merged entry by entry with memctl's change (base the
// old, ours the new, theirs the file) or, when that does not merge, left
// alone with an error naming the file (as git checkout refuses to
// overwrite local changes). Readers read the committed tree for the
// journalled paths while a journal is present (ReadView); they decide
// nothing.
//
// On-disk layout, in the git-ignored .memctl/cache:
//
//	txn/journal.json   the journal of the write in progress
//	txn/purge.json     a history purge a forget still owes (same format)
//	apply.lock         flock: exclusive while a write applies, shared
//	                   while a reader reads

// Failpoints, named by MEMCTL_FAILPOINT: the process exits with code
// FailpointExit at that point, without running deferred functions, as a
// kill -9 would leave it. Tests and the simulation crash writes with them.
const (
	FailpointEnv      = "MEMCTL_FAILPOINT"
	FailpointExit     = 99
	FailTxnStaged     = "txn-staged"      // objects and commit written, no journal
	FailTxnJournaled  = "txn-journaled"   // journal written, the ref not moved
	FailTxnCommitted  = "txn-committed"   // the ref moved, no file replaced
	FailTxnHalfFiles  = "txn-half-files"  // the first file replaced, not the rest
	FailTxnFiles      = "txn-files"       // every file replaced, index not updated
	FailTxnIndexed    = "txn-indexed"     // index updated; queue, cleanup and journal left
	FailTxnMidDequeue = "txn-mid-dequeue" // half the consumed candidates dequeued
	FailForgetPurge   = "forget-purge"    // a forget landed and cleaned, its purge not begun
)

// failpointAliases keeps the names of earlier releases working.
var failpointAliases = map[string]string{
	"after-write":  FailTxnFiles,
	"after-commit": FailTxnIndexed,
	"mid-dequeue":  FailTxnMidDequeue,
}

// failpoint exits the process when MEMCTL_FAILPOINT names point.
func (s *Store) failpoint(point string) {
	name := s.getenv(FailpointEnv)
	if a, ok := failpointAliases[name]; ok {
		name = a
	}
	if name == point {
		if s.Exit != nil {
			s.Exit(FailpointExit)
			return
		}
		os.Exit(FailpointExit)
	}
}

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Store) getenv(k string) string {
	if s.Getenv != nil {
		return s.Getenv(k)
	}
	return os.Getenv(k)
}

// ErrStale is returned (wrapped in a *StaleError) when the files or the
// commit a transaction was planned on changed before it could apply.
var ErrStale = errors.New("the memory changed while the write was planned")

// StaleError names what changed under a transaction. Nothing was written;
// the caller re-plans on the new state.
type StaleError struct {
	Paths []string // files no longer as planned
	Head  string   // set when HEAD moved away from the base
}

func (e *StaleError) Error() string {
	if e.Head != "" {
		return fmt.Sprintf("%v: HEAD moved to %.12s", ErrStale, e.Head)
	}
	return fmt.Sprintf("%v: %s changed", ErrStale, strings.Join(e.Paths, ", "))
}

// Is makes errors.Is(err, ErrStale) true.
func (e *StaleError) Is(target error) bool { return target == ErrStale }

// ErrEditedSince is returned (wrapped in an *EditedError) when an
// interrupted write cannot be finished because a person edited one of its
// files since, in a way that does not merge with it.
var ErrEditedSince = errors.New("edited by hand since an interrupted write")

// EditedError names the files an interrupted write cannot bring up to
// date. Nothing was changed.
type EditedError struct {
	Op     string
	Commit string
	Paths  []string
}

func (e *EditedError) Error() string {
	files := strings.Join(e.Paths, ", ")
	return fmt.Sprintf("%q was committed (%.12s) but interrupted before it updated %s, and %s %s edited by hand since, in a way that does not merge with it (the same entry changed on both sides, or the file deleted); nothing was changed",
		e.Op, e.Commit, files, files, plural(len(e.Paths), "was", "were"))
}

// Is makes errors.Is(err, ErrEditedSince) true.
func (e *EditedError) Is(target error) bool { return target == ErrEditedSince }

// Hint tells the person how to go on.
func (e *EditedError) Hint() string {
	return "`memctl recover --keep-edits` keeps your version of " + strings.Join(e.Paths, ", ") +
		" (committed as your hand edit on top of memctl's commit); `memctl recover --discard-edits` puts memctl's committed version in its place (yours is saved under " + RescueDir + "/)"
}

// Txn is one write transaction. Begin it with the lock held, Put the
// files, Consume the candidates it applies, then Commit or Abort.
type Txn struct {
	s       *Store
	base    string
	order   []string
	data    map[string][]byte // new contents (nil: delete)
	planned map[string]string // sha256 of the content planned on ("" = absent)
	consume []consumeRec
	forget  *forgetOwed // the cleanup a forget owes once it landed
	purge   bool        // a history purge of the forgotten ids follows
	author  gitstore.Signature
	done    bool
}

type consumeRec struct{ id, outcome string }

// txnJournal is the one journal record of a write (and, in purge.json, of
// a purge a forget still owes).
type txnJournal struct {
	Op       string            `json:"op"` // the commit's subject: what was asked
	Ref      string            `json:"ref"`
	Parent   string            `json:"parent"` // "" = unborn branch
	Commit   string            `json:"commit"`
	Files    []gitstore.Change `json:"files"`
	Consumed []string          `json:"consumed,omitempty"`
	Forget   *forgetOwed       `json:"forget,omitempty"`
	Purge    bool              `json:"purge,omitempty"`
}

func contentHash(b []byte, exists bool) string {
	if !exists {
		return ""
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// Begin starts a transaction on the current HEAD. The caller holds the
// lock (Store.Lock) until Commit or Abort returns.
func (s *Store) Begin(ctx context.Context) (*Txn, error) {
	if !s.locked {
		return nil, errors.New("mdmem: Begin without the lock")
	}
	base, err := s.Repo.HeadHash(ctx)
	if err != nil {
		return nil, err
	}
	return &Txn{s: s, base: base, data: map[string][]byte{}, planned: map[string]string{}}, nil
}

// Base returns the commit the transaction is planned on ("" = unborn).
func (t *Txn) Base() string { return t.base }

// Put sets the new content of a memory-relative file (nil deletes it).
// basedOn is the content the caller planned on (nil: the file was absent);
// Commit refuses with a *StaleError if the file no longer holds it.
func (t *Txn) Put(ctx context.Context, rel string, basedOn, data []byte) error {
	if t.done {
		return errors.New("mdmem: Put after Commit or Abort")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkRelPath(rel); err != nil {
		return err
	}
	if strings.HasPrefix(rel, ".memctl/cache/") || strings.HasPrefix(rel, QueueDir+"/") || rel == QueueDir {
		return fmt.Errorf("refusing to commit %s: it is memctl's git-ignored working data", rel)
	}
	if len(data) > MaxFileBytes {
		return fmt.Errorf("refusing to write %s: %d bytes is over memctl's read limit of %d bytes", rel, len(data), MaxFileBytes)
	}
	if _, ok := t.data[rel]; !ok {
		t.order = append(t.order, rel)
		t.planned[rel] = contentHash(basedOn, basedOn != nil)
	}
	t.data[rel] = data
	return nil
}

// PutOnDisk is Put planned on the file as it is on disk now (the caller
// holds the lock, and has committed hand edits).
func (t *Txn) PutOnDisk(ctx context.Context, rel string, data []byte) error {
	old, err := ReadMemoryFile(t.s.Dir, rel)
	if errors.Is(err, fs.ErrNotExist) {
		old, err = nil, nil
	}
	if err != nil {
		return err
	}
	return t.Put(ctx, rel, old, data)
}

// Consume records that the transaction applies a queued candidate: a
// ledger line (in the commit), a Memctl-Consumed trailer, and the queue
// file removed once committed.
func (t *Txn) Consume(candID, outcome string) {
	t.consume = append(t.consume, consumeRec{candID, outcome})
}

// Paths returns the files put so far, sorted.
func (t *Txn) Paths() []string {
	out := append([]string(nil), t.order...)
	sort.Strings(out)
	return out
}

// Abort drops the transaction. Safe after Commit.
func (t *Txn) Abort() { t.done = true }

// Commit writes the transaction (see the order above) and returns the
// commit hash ("" when no file changed). It refuses with a *StaleError,
// writing nothing, when HEAD is no longer the base or a file no longer
// holds what was planned on. Once the ref moved it is not interrupted by
// ctx; an error after that point says what is left to the next run.
func (t *Txn) Commit(ctx context.Context, msg CommitMessage) (string, error) {
	if t.done {
		return "", errors.New("mdmem: Commit twice")
	}
	defer t.Abort()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	s := t.s
	if err := t.stageLedger(ctx); err != nil {
		return "", err
	}
	for _, r := range t.consume {
		msg.Consumed = append(msg.Consumed, r.id)
	}
	text, err := s.message(msg)
	if err != nil {
		return "", err
	}
	return t.commitText(ctx, text)
}

// commitText is Commit with the message rendered.
func (t *Txn) commitText(ctx context.Context, text string) (string, error) {
	t.done = true
	s := t.s
	if len(t.order) == 0 {
		return "", nil
	}
	if head, err := s.Repo.HeadHash(ctx); err != nil {
		return "", err
	} else if head != t.base {
		return "", &StaleError{Head: head}
	}
	var stale []string
	for _, p := range t.order {
		b, err := ReadMemoryFile(s.Dir, p)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if contentHash(b, exists) != t.planned[p] {
			stale = append(stale, p)
		}
	}
	if len(stale) > 0 {
		sort.Strings(stale)
		return "", &StaleError{Paths: stale}
	}
	author := t.author
	if author == (gitstore.Signature{}) {
		author = s.Signature()
	}
	prep, err := s.Repo.Prepare(ctx, gitstore.PrepareRequest{Base: t.base, Files: t.data, Message: text, Author: author, When: s.now()})
	if errors.Is(err, gitstore.ErrConcurrentUpdate) {
		head, _ := s.Repo.HeadHash(ctx)
		return "", &StaleError{Head: head}
	}
	if err != nil || prep == nil {
		return "", err
	}
	t.data = nil // the blobs hold the contents now
	for i, c := range prep.Changes {
		// The worktree holds what was planned on (checked above); where
		// that is not HEAD's blob, it is recorded: recovery takes it for
		// the file's unedited state and merge base.
		w, err := s.Repo.StoreWorktreeBlob(ctx, c.Path)
		if err != nil {
			return "", err
		}
		switch {
		case w == c.Old:
		case w == "":
			prep.Changes[i].Work = gitstore.WorkAbsent
		default:
			prep.Changes[i].Work = w
		}
	}
	s.failpoint(FailTxnStaged)
	j := &txnJournal{Op: prep.Subject, Ref: prep.Ref, Parent: prep.Parent, Commit: prep.Commit, Files: prep.Changes,
		Forget: t.forget, Purge: t.purge}
	for _, r := range t.consume {
		j.Consumed = append(j.Consumed, r.id)
	}
	return prep.Commit, s.landJournal(context.WithoutCancel(ctx), j, prep)
}

// landJournal lands a prepared commit with its journal and finishes it:
// the files, the index, the queue, a forget's cleanup, the journal. Before
// the ref moved, an error means nothing happened (a *StaleError when the
// branch moved); after, it says what the next run finishes.
func (s *Store) landJournal(ctx context.Context, j *txnJournal, prep *gitstore.Prepared) error {
	unlockApply, err := s.lockApply(true)
	if err != nil {
		return err
	}
	defer unlockApply()
	journaled := false
	err = s.Repo.Land(ctx, prep, gitstore.LandSteps{
		Journal: func() error {
			if err := s.writeJournal(ctx, journalName, j); err != nil {
				return fmt.Errorf("write journal: %w", err)
			}
			journaled = true
			s.failpoint(FailTxnJournaled)
			return nil
		},
		Moved: func() { s.failpoint(FailTxnCommitted) },
		Checkout: func() error {
			plan, err := s.planCheckout(ctx, j, "")
			if err != nil {
				return err
			}
			return s.applyCheckout(ctx, plan, true)
		},
	})
	if err != nil {
		head, herr := s.Repo.HeadHash(ctx)
		if herr == nil && head == prep.Parent {
			// The ref never moved: nothing happened.
			if journaled {
				s.removeJournal(journalName)
			}
			if errors.Is(err, gitstore.ErrConcurrentUpdate) {
				return &StaleError{Head: head}
			}
			return err
		}
		return fmt.Errorf("%w (the next memctl command finishes the write)", err)
	}
	s.failpoint(FailTxnIndexed)
	return s.finishJournal(ctx, j)
}

// finishJournal does what follows a landed commit outside git: the
// consumed candidates leave the queue, a forget's cleanup is made (and its
// purge recorded as owed), and the journal is removed.
func (s *Store) finishJournal(ctx context.Context, j *txnJournal) error {
	if err := s.finishJournalKeep(ctx, j); err != nil {
		return fmt.Errorf("committed %.12s, but %w (the next memctl command finishes it)", j.Commit, err)
	}
	s.removeJournal(journalName)
	return nil
}

// raiseMarksOf keeps the committed id high-water marks locally too: a
// later revert or reset of state.json does not bring an id back into use.
func (s *Store) raiseMarksOf(ctx context.Context, j *txnJournal) {
	for _, f := range j.Files {
		if f.Path != StatePath || f.New == "" {
			continue
		}
		var st State
		if b, err := s.Repo.ReadBlob(ctx, f.New); err == nil && json.Unmarshal(b, &st) == nil {
			_ = s.raiseLocalMarks(ctx, st.LastID) // a cache: best effort
		}
	}
}

// stageLedger adds the ledger lines of the consumed candidates.
func (t *Txn) stageLedger(ctx context.Context) error {
	if len(t.consume) == 0 {
		return nil
	}
	byFile := map[string][]consumeRec{}
	var order []string
	for _, r := range t.consume {
		p := LedgerPath(r.id)
		if _, ok := byFile[p]; !ok {
			order = append(order, p)
		}
		byFile[p] = append(byFile[p], r)
	}
	now := t.s.now()
	for _, p := range order {
		base, err := readFileIfExists(t.s.abs(p))
		if err != nil {
			return err
		}
		if err := t.Put(ctx, p, base, appendLedger(base, byFile[p], now)); err != nil {
			return err
		}
	}
	return nil
}

// dequeue removes applied candidates' queue files, in two halves so a
// failpoint can crash in between.
func (s *Store) dequeue(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if len(ids) > 1 && s.getenv(FailpointEnv) != "" {
		if err := Dequeue(ctx, s.Dir, ids[:len(ids)/2]); err != nil {
			return err
		}
		s.failpoint(FailTxnMidDequeue)
	}
	return Dequeue(ctx, s.Dir, ids)
}

// fileStep is what bringing one worktree file to a commit takes.
type fileStep struct {
	path   string
	write  bool   // write data (nil data: delete the file)
	data   []byte // the content to write
	merged bool   // a person's edit, merged with memctl's change
}

// planCheckout decides, path by path and by hash equality, how the
// worktree reaches the journal's commit: nothing (the file holds the new
// blob), the new content (it holds the old blob), or, for a person's edit,
// the entry-level merge of memctl's change into it. target, when not "",
// names a commit whose blobs are the goal instead of the journal's new
// ones (a commit a person made on top, see recoverJournal). A file whose
// edit does not merge makes it return an *EditedError; nothing is written
// either way.
func (s *Store) planCheckout(ctx context.Context, j *txnJournal, target string) ([]fileStep, error) {
	var steps []fileStep
	var conflicts []string
	for _, f := range j.Files {
		want, pristine := f.New, []string{f.Planned()}
		var wantData []byte
		if target != "" {
			hb, err := s.Repo.BlobAt(ctx, target, f.Path)
			if err != nil {
				return nil, err
			}
			if hb != f.New {
				// Committed since by a person: memctl's change goes on top.
				merged, ok, err := s.mergeBlobs(ctx, f.Path, f.Old, f.New, hb)
				if err != nil {
					return nil, err
				}
				if !ok {
					conflicts = append(conflicts, f.Path)
					continue
				}
				wantData = merged
				if want, err = s.Repo.BlobHash(f.Path, merged); err != nil {
					return nil, err
				}
				pristine = append(pristine, hb)
			}
		}
		disk, err := s.Repo.WorktreeBlob(ctx, f.Path)
		if err != nil {
			return nil, err
		}
		switch {
		case disk == want:
			if wantData != nil {
				steps = append(steps, fileStep{path: f.Path, data: wantData})
			}
			continue
		case slices.Contains(pristine, disk):
			if wantData == nil && want != "" {
				if wantData, err = s.Repo.ReadBlob(ctx, want); err != nil {
					return nil, err
				}
			}
			steps = append(steps, fileStep{path: f.Path, write: true, data: wantData})
			continue
		}
		// A person's edit: memctl's change merged into it, entry by entry.
		var merged []byte
		ok := false
		for _, base := range pristine {
			if merged, ok, err = s.mergeWith(ctx, f.Path, base, want, wantData); err != nil {
				return nil, err
			}
			if ok {
				break
			}
		}
		if !ok {
			conflicts = append(conflicts, f.Path)
			continue
		}
		steps = append(steps, fileStep{path: f.Path, write: true, data: merged, merged: true})
	}
	if len(conflicts) > 0 {
		sort.Strings(conflicts)
		return nil, &EditedError{Op: j.Op, Commit: j.Commit, Paths: conflicts}
	}
	return steps, nil
}

// mergeWith merges memctl's change base → want (wantData when already at
// hand) into the worktree file at path.
func (s *Store) mergeWith(ctx context.Context, path, base, want string, wantData []byte) ([]byte, bool, error) {
	disk, err := ReadMemoryFile(s.Dir, path)
	if errors.Is(err, fs.ErrNotExist) || want == "" {
		return nil, false, nil // deleted by the person, or by memctl: no merge
	}
	if err != nil {
		return nil, false, err
	}
	old, err := s.blobOrNil(ctx, base)
	if err != nil {
		return nil, false, err
	}
	if old == nil && strings.HasSuffix(path, ".md") {
		// A file the write created: a person's edit of it merges like
		// any other, from an empty base.
		old = []byte{}
	}
	if wantData == nil {
		if wantData, err = s.Repo.ReadBlob(ctx, want); err != nil {
			return nil, false, err
		}
	}
	merged, ok := mergeOnto(path, old, wantData, disk)
	return merged, ok, nil
}

// mergeBlobs merges the change old → new into theirs, all three blobs.
func (s *Store) mergeBlobs(ctx context.Context, path, old, new, theirs string) ([]byte, bool, error) {
	var b [3][]byte
	for i, h := range []string{old, new, theirs} {
		var err error
		if b[i], err = s.blobOrNil(ctx, h); err != nil {
			return nil, false, err
		}
	}
	if b[1] == nil || b[2] == nil {
		return nil, false, nil
	}
	merged, ok := mergeOnto(path, b[0], b[1], b[2])
	return merged, ok, nil
}

func (s *Store) blobOrNil(ctx context.Context, h string) ([]byte, error) {
	if h == "" {
		return nil, nil
	}
	return s.Repo.ReadBlob(ctx, h)
}

// applyCheckout writes the planned files.
func (s *Store) applyCheckout(ctx context.Context, steps []fileStep, failpoints bool) error {
	n := 0
	for _, st := range steps {
		if !st.write {
			continue
		}
		if err := s.writeFile(ctx, st.path, st.data); err != nil {
			return err
		}
		if n++; failpoints && n == 1 && len(steps) > 1 {
			s.failpoint(FailTxnHalfFiles)
		}
	}
	if failpoints {
		s.failpoint(FailTxnFiles)
	}
	return nil
}

// journalName and purgeName are the journal files in TxnDir.
const (
	journalName = "journal.json"
	purgeName   = "purge.json"
)

func (s *Store) writeJournal(ctx context.Context, name string, j *txnJournal) error {
	if err := s.ensureCacheDir(TxnDir); err != nil {
		return err
	}
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return WriteFileAtomic(ctx, s.abs(TxnDir+"/"+name), data, PrivateFileMode)
}

func (s *Store) removeJournal(name string) {
	_ = os.Remove(s.abs(TxnDir + "/" + name))
	_ = SyncDir(s.abs(TxnDir))
}

// readJournalIn returns the journal record in dir's TxnDir/name, or nil.
func readJournalIn(dir, name string) (*txnJournal, error) {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(TxnDir), name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var j txnJournal
	if err := json.Unmarshal(b, &j); err != nil || !validHash(j.Commit) || (j.Parent != "" && !validHash(j.Parent)) {
		return nil, fmt.Errorf("%s/%s is not a journal memctl wrote", TxnDir, name)
	}
	for _, f := range j.Files {
		if err := checkRelPath(f.Path); err != nil {
			return nil, fmt.Errorf("%s/%s: %w", TxnDir, name, err)
		}
		if (f.Old != "" && !validHash(f.Old)) || (f.New != "" && !validHash(f.New)) || (f.Work != "" && f.Work != gitstore.WorkAbsent && !validHash(f.Work)) {
			return nil, fmt.Errorf("%s/%s: a bad blob hash", TxnDir, name)
		}
	}
	return &j, nil
}

func validHash(h string) bool {
	if len(h) != 40 {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

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

// ensureCacheDir creates a directory under .memctl, refusing to create or
// write through a symlink (a cache pointed outside the memory).
func (s *Store) ensureCacheDir(rel string) error {
	return EnsureDir(s.Dir, rel)
}

// EnsureDir creates dir/rel (and its parents inside dir) as real
// directories; a symlink or file on the way is refused, so memctl never
// writes outside the memory directory.
func EnsureDir(dir, rel string) error {
	p, err := SafeDir(dir, rel)
	if err != nil {
		return err
	}
	return os.MkdirAll(p, 0o755)
}

func (s *Store) abs(rel string) string { return filepath.Join(s.Dir, filepath.FromSlash(rel)) }

// lockApply takes the apply lock: exclusive for a transaction applying,
// shared for a reader. A memory whose cache cannot hold the lock file
// (read-only) is read without it.
func (s *Store) lockApply(exclusive bool) (func(), error) {
	return lockApplyIn(s.Dir, exclusive)
}

func lockApplyIn(dir string, exclusive bool) (func(), error) {
	if err := EnsureDir(dir, filepath.Dir(applyLockPath)); err != nil {
		if exclusive {
			return nil, err
		}
		return func() {}, nil
	}
	fl := flock.New(filepath.Join(dir, filepath.FromSlash(applyLockPath)))
	var err error
	if exclusive {
		err = fl.Lock()
	} else {
		err = fl.RLock()
	}
	if err != nil {
		if exclusive {
			return nil, fmt.Errorf("apply lock: %w", err)
		}
		return func() {}, nil
	}
	released := false
	return func() {
		if !released {
			released = true
			_ = fl.Unlock()
			_ = fl.Close()
		}
	}, nil
}

// ReadView is a consistent view of the memory files for a reader that
// takes no writer lock: while it is open no write applies, and while a
// killed write's journal is present the files it names are read from the
// committed tree (HEAD), never from a half-updated worktree.
type ReadView struct {
	dir     string
	overlay map[string]*overlayFile
	unlock  func()
}

type overlayFile struct {
	data   []byte
	exists bool
}

// OpenReadView opens a view of the memory in dir; Close it when done.
func OpenReadView(dir string) (*ReadView, error) {
	unlock, err := lockApplyIn(dir, false)
	if err != nil {
		return nil, err
	}
	v := &ReadView{dir: dir, unlock: unlock}
	j, err := readJournalIn(dir, journalName)
	if err != nil || j == nil {
		return v, nil // an unreadable journal is reported by the next writer
	}
	repo, err := gitstore.Open(context.Background(), dir)
	if err != nil {
		return v, nil
	}
	for _, f := range j.Files {
		b, ok, err := repo.ReadHead(context.Background(), f.Path)
		if err != nil {
			continue
		}
		if v.overlay == nil {
			v.overlay = map[string]*overlayFile{}
		}
		v.overlay[f.Path] = &overlayFile{data: b, exists: ok}
	}
	return v, nil
}

// Close releases the view.
func (v *ReadView) Close() { v.unlock() }

// Overlaid reports whether the view reads some files from the committed
// tree rather than the disk (caches keyed on the disk must not be used).
func (v *ReadView) Overlaid() bool { return len(v.overlay) > 0 }

// ReadFile reads a memory-relative file as ReadMemoryFile does, through
// the view.
func (v *ReadView) ReadFile(rel string) ([]byte, error) {
	if of, ok := v.overlay[rel]; ok {
		if !of.exists {
			return nil, &fs.PathError{Op: "open", Path: rel, Err: fs.ErrNotExist}
		}
		return append([]byte(nil), of.data...), nil
	}
	return ReadMemoryFile(v.dir, rel)
}

// TopicSlugs lists the topic files as ListTopicSlugs does, through the
// view.
func (v *ReadView) TopicSlugs() ([]string, error) {
	slugs, err := ListTopicSlugs(v.dir)
	if err != nil || len(v.overlay) == 0 {
		return slugs, err
	}
	set := map[string]bool{}
	for _, s := range slugs {
		set[s] = true
	}
	for p, of := range v.overlay {
		if !strings.HasPrefix(p, TopicDir+"/") || !strings.HasSuffix(p, ".md") || strings.Count(p, "/") != 1 {
			continue
		}
		slug := strings.TrimSuffix(strings.TrimPrefix(p, TopicDir+"/"), ".md")
		if ValidSlug(slug) == nil {
			set[slug] = of.exists
		}
	}
	out := slugs[:0:0]
	for s, ok := range set {
		if ok {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out, nil
}
