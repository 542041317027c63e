package mdmem

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

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
	data    map[string][]byte                 // new contents (nil: delete)
	load    map[string]func() ([]byte, error) // new contents read when committed (PutLoad)
	planned map[string]string                 // sha256 of the content planned on ("" = absent)
	consume []consumeRec
	forget  *forgetOwed // the cleanup a forget owes once it landed
	purge   bool        // a history purge of the forgotten ids follows
	author  gitstore.Signature
	merge   string // a second parent (SetMergeParent)
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
	if err := t.checkPut(ctx, rel, basedOn, len(data)); err != nil {
		return err
	}
	delete(t.load, rel)
	t.data[rel] = data
	return nil
}

// PutLoad is Put of a file of size bytes whose content load returns (not
// nil) when Commit writes its blob, once: a large write (import) holds one
// such file at a time, not all of them.
func (t *Txn) PutLoad(ctx context.Context, rel string, basedOn []byte, size int, load func() ([]byte, error)) error {
	if err := t.checkPut(ctx, rel, basedOn, size); err != nil {
		return err
	}
	delete(t.data, rel)
	if t.load == nil {
		t.load = map[string]func() ([]byte, error){}
	}
	t.load[rel] = func() ([]byte, error) {
		b, err := load()
		if err == nil && len(b) != size {
			err = fmt.Errorf("%s: %d bytes read back, %d put", rel, len(b), size)
		}
		return b, err
	}
	return nil
}

// checkPut refuses a Put of size bytes to rel, and records the content
// the file is planned on at its first Put.
func (t *Txn) checkPut(ctx context.Context, rel string, basedOn []byte, size int) error {
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
	if size > MaxFileBytes {
		return fmt.Errorf("refusing to write %s: %d bytes is over memctl's read limit of %d bytes", rel, size, MaxFileBytes)
	}
	if _, ok := t.planned[rel]; !ok {
		t.order = append(t.order, rel)
		t.planned[rel] = contentHash(basedOn, basedOn != nil)
	}
	return nil
}

// PutOnDisk is Put planned on the file as it is on disk now (the caller
// holds the lock, and has committed hand edits).
func (t *Txn) PutOnDisk(ctx context.Context, rel string, data []byte) error {
	old, err := t.onDisk(rel)
	if err != nil {
		return err
	}
	return t.Put(ctx, rel, old, data)
}

// PutLoadOnDisk is PutLoad planned on the file as it is on disk now.
func (t *Txn) PutLoadOnDisk(ctx context.Context, rel string, size int, load func() ([]byte, error)) error {
	old, err := t.onDisk(rel)
	if err != nil {
		return err
	}
	return t.PutLoad(ctx, rel, old, size, load)
}

// onDisk returns the memory file rel as it is on disk (nil: absent).
func (t *Txn) onDisk(rel string) ([]byte, error) {
	old, err := ReadMemoryFile(t.s.Dir, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return old, err
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

// SetMergeParent makes the commit a merge of another commit into the
// base (memctl sync); it is made even when no file changes.
func (t *Txn) SetMergeParent(commit string) { t.merge = commit }

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
	if len(t.order) == 0 && t.merge == "" {
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
	prep, err := s.Repo.Prepare(ctx, gitstore.PrepareRequest{Base: t.base, Files: t.data, Load: t.load, Message: text, Author: author, When: s.now(), MergeParent: t.merge})
	if errors.Is(err, gitstore.ErrConcurrentUpdate) {
		head, _ := s.Repo.HeadHash(ctx)
		return "", &StaleError{Head: head}
	}
	if err != nil || prep == nil {
		return "", err
	}
	t.data, t.load = nil, nil // the blobs hold the contents now
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
	write  bool   // write data (nil data and no blob: delete the file)
	data   []byte // the content to write
	blob   string // or the blob that holds it
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
		// Untouched since the write was planned: the content it planned on,
		// or the parent's (what git's index, not yet updated, gives back
		// through git checkout or git stash).
		want, pristine := f.New, []string{f.Planned()}
		if f.Old != f.Planned() {
			pristine = append(pristine, f.Old)
		}
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
			st := fileStep{path: f.Path, write: true, data: wantData}
			if wantData == nil && want != "" {
				st.blob = want // read when written: one file in memory at a time
			}
			steps = append(steps, st)
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
		data := st.data
		if st.blob != "" {
			var err error
			if data, err = s.Repo.ReadBlob(ctx, st.blob); err != nil {
				return err
			}
		}
		if err := s.writeFile(ctx, st.path, data); err != nil {
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

// ensureCacheDir creates a directory under .memctl, refusing to create or
// write through a symlink (a cache pointed outside the memory).
func (s *Store) ensureCacheDir(rel string) error {
	return EnsureDir(s.Dir, rel)
}

// ScratchFile creates a temp file in the memory's cache directory (not a
// tmpfs /tmp, which would hold it in memory) and unlinks it at once: it
// lives until closed, and a killed process leaves nothing. pattern is
// os.CreateTemp's.
func ScratchFile(dir, pattern string) (*os.File, error) {
	// Never through a .memctl or .memctl/cache that links out of the
	// memory: a scratch file holds memory text.
	if err := EnsureDir(dir, CacheDir); err != nil {
		return nil, err
	}
	fh, err := os.CreateTemp(filepath.Join(dir, filepath.FromSlash(CacheDir)), pattern)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(fh.Name()); err != nil {
		fh.Close()
		return nil, err
	}
	return fh, nil
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
