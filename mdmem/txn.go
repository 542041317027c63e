package mdmem

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

// Every write of the memory (import, consolidate, confirm, reject, a
// hand-edit restoration) is one Txn: planned on a base commit, staged on
// disk, journaled once, applied by renames, committed with git's lock
// protocol on exactly that base, then cleaned up. A crash at any point is
// finished or undone by the next writer (Store.Lock), and readers never
// see a half-applied transaction (ReadView).
//
// On-disk layout, all in the git-ignored .memctl/cache:
//
//	txn/<id>.journal.json   the journal (written atomically: its presence
//	                        is the point of no return)
//	txn/<id>-<n>.new        staged new content of the n-th file
//	txn/<id>-<n>.old        hard link to the content it replaces
//	apply.lock              flock: exclusive while a txn applies, shared
//	                        while a reader reads
const (
	// TrailerTxn names the transaction a commit completes; recovery looks
	// for it to know whether an interrupted write landed.
	TrailerTxn = "Memctl-Txn"
	// landedSearch bounds how far back recovery looks for the commit of an
	// interrupted transaction.
	landedSearch = 1000
)

// Failpoints, named by MEMCTL_FAILPOINT: the process exits with code
// FailpointExit at that point, without running deferred functions, as a
// kill -9 would leave it. Tests and the simulation crash writes with them.
const (
	FailpointEnv      = "MEMCTL_FAILPOINT"
	FailpointExit     = 99
	FailTxnStaged     = "txn-staged"     // new contents staged, no journal
	FailTxnJournaled  = "txn-journaled"  // journal written, no file replaced
	FailTxnHalfFiles  = "txn-half-files" // the first file replaced, not the rest
	FailTxnFiles      = "txn-files"      // every file replaced, no commit
	FailTxnCommitted  = "txn-committed"  // committed, journal and queue files still there
	FailTxnMidDequeue = "txn-mid-dequeue"
)

// failpointAliases keeps the names of earlier releases working.
var failpointAliases = map[string]string{
	"after-write":  FailTxnFiles,
	"after-commit": FailTxnCommitted,
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

// Txn is one write transaction. Begin it with the lock held, Put the
// files, Consume the candidates it applies, then Commit or Abort.
type Txn struct {
	s       *Store
	id      string
	base    string
	files   []*txnFile
	byPath  map[string]*txnFile
	consume []consumeRec
	done    bool
	// journaled: the journal is on disk; from then on only a successful
	// commit or a complete rollback may remove the transaction's files.
	journaled bool
}

type consumeRec struct{ id, outcome string }

type txnFile struct {
	Path   string `json:"path"`
	Old    string `json:"old"`              // sha256 of the content planned on; "" = absent
	New    string `json:"new"`              // sha256 of the new content; "" = delete
	Staged string `json:"staged,omitempty"` // staged new content, in TxnDir
	Backup string `json:"backup,omitempty"` // the replaced content, in TxnDir
}

type txnJournal struct {
	ID      string             `json:"id"`
	Base    string             `json:"base"` // "" = unborn branch
	Files   []*txnFile         `json:"files"`
	Message string             `json:"message"`
	Author  gitstore.Signature `json:"author"`
	Dequeue []string           `json:"dequeue,omitempty"`
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
	if err := s.ensureCacheDir(TxnDir); err != nil {
		return nil, err
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	return &Txn{s: s, id: hex.EncodeToString(b[:]), base: base, byPath: map[string]*txnFile{}}, nil
}

// Base returns the commit the transaction is planned on ("" = unborn).
func (t *Txn) Base() string { return t.base }

// Put stages the new content of a memory-relative file (nil deletes it).
// basedOn is the content the caller planned on (nil: the file was absent);
// Commit refuses with a *StaleError if the file no longer holds it. The
// content is written to disk at once, so callers can drop it.
func (t *Txn) Put(ctx context.Context, rel string, basedOn, data []byte) error {
	if t.done {
		return errors.New("mdmem: Put after Commit or Abort")
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
	f := t.byPath[rel]
	if f == nil {
		f = &txnFile{Path: rel, Old: contentHash(basedOn, basedOn != nil)}
		t.byPath[rel] = f
		t.files = append(t.files, f)
	}
	f.New = contentHash(data, data != nil)
	if f.Staged != "" {
		_ = os.Remove(t.s.abs(filepath.Join(TxnDir, f.Staged)))
		f.Staged = ""
	}
	if data == nil {
		return nil
	}
	f.Staged = fmt.Sprintf("%s-%d.new", t.id, len(t.files))
	for _, g := range t.files {
		if g != f && g.Staged == f.Staged {
			f.Staged = fmt.Sprintf("%s-%d-%d.new", t.id, len(t.files), time.Now().UnixNano())
		}
	}
	return WriteFileAtomic(ctx, t.s.abs(filepath.Join(TxnDir, f.Staged)), data, PrivateFileMode)
}

// Consume records that the transaction applies a queued candidate: a
// ledger line (in the commit), a Memctl-Consumed trailer, and the queue
// file removed once committed.
func (t *Txn) Consume(candID, outcome string) {
	t.consume = append(t.consume, consumeRec{candID, outcome})
}

// Paths returns the files staged so far, sorted.
func (t *Txn) Paths() []string {
	out := make([]string, 0, len(t.files))
	for _, f := range t.files {
		out = append(out, f.Path)
	}
	sort.Strings(out)
	return out
}

// Abort drops the staged files. Safe after Commit.
func (t *Txn) Abort() {
	if t.done {
		return
	}
	t.done = true
	if !t.journaled {
		t.s.removeTxnFiles(t.id)
	}
}

// Commit applies the transaction and returns the commit hash ("" when no
// file changed). It refuses with a *StaleError, writing nothing, when HEAD
// is no longer the base or a file no longer holds what was planned on.
// Once it starts replacing files it is not interrupted by ctx; if the
// commit fails (a git lock held, a full disk) the files are put back.
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
	if len(t.files) == 0 {
		return "", nil
	}
	if head, err := s.Repo.HeadHash(ctx); err != nil {
		return "", err
	} else if head != t.base {
		return "", &StaleError{Head: head}
	}
	var stale []string
	for _, f := range t.files {
		h, err := s.diskHash(f.Path)
		if err != nil {
			return "", err
		}
		if h != f.Old {
			stale = append(stale, f.Path)
		}
	}
	if len(stale) > 0 {
		sort.Strings(stale)
		return "", &StaleError{Paths: stale}
	}
	for _, r := range t.consume {
		msg.Consumed = append(msg.Consumed, r.id)
	}
	msg.Extra = append(msg.Extra, [2]string{TrailerTxn, t.id})
	text, err := s.message(msg)
	if err != nil {
		return "", err
	}
	s.failpoint(FailTxnStaged)
	ctx = context.WithoutCancel(ctx)

	unlockApply, err := s.lockApply(true)
	if err != nil {
		return "", err
	}
	defer unlockApply()
	for i, f := range t.files {
		if f.Old == "" {
			continue
		}
		f.Backup = fmt.Sprintf("%s-%d.old", t.id, i+1)
		if err := linkOrCopy(s.abs(f.Path), s.abs(filepath.Join(TxnDir, f.Backup))); err != nil {
			return "", fmt.Errorf("keep the old %s: %w", f.Path, err)
		}
	}
	j := &txnJournal{ID: t.id, Base: t.base, Files: t.files, Message: text, Author: s.Signature()}
	for _, r := range t.consume {
		j.Dequeue = append(j.Dequeue, r.id)
	}
	if err := s.writeTxnJournal(ctx, j); err != nil {
		return "", fmt.Errorf("write journal: %w", err)
	}
	t.journaled = true
	s.failpoint(FailTxnJournaled)
	hash, err := s.applyTxn(ctx, j, true, nil)
	if err != nil {
		head, herr := s.Repo.HeadHash(ctx)
		onBase := herr == nil && head == j.Base
		if errors.Is(err, gitstore.ErrConcurrentUpdate) && herr == nil {
			err = &StaleError{Head: head} // a git process committed meanwhile: plan again
		}
		if _, _, rerr := s.rollbackTxn(ctx, j, onBase); rerr != nil {
			return "", fmt.Errorf("%w (and putting the files back failed: %v; the next memctl write finishes it)", err, rerr)
		}
		s.removeTxnFiles(j.ID)
		return "", err
	}
	s.failpoint(FailTxnCommitted)
	s.removeTxnFiles(j.ID)
	unlockApply()
	if err := s.dequeue(ctx, j.Dequeue); err != nil {
		return hash, fmt.Errorf("committed %.12s, but removing its queue files failed (the next consolidate does it): %w", hash, err)
	}
	return hash, nil
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

func (s *Store) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
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

// applyTxn replaces the files that do not hold their new content yet and
// commits them on the journal's base. Staged contents are copied into
// place (the staged file stays until the transaction is cleaned up, so
// recovery can still commit it). Files in keep hold a person's edit made
// on top of the transaction: they stay as they are, and the commit takes
// their staged content.
func (s *Store) applyTxn(ctx context.Context, j *txnJournal, failpoints bool, keep map[string]bool) (string, error) {
	return s.applyTxnOn(ctx, j, j.Base, failpoints, keep)
}

// applyTxnOn is applyTxn committing on top of base.
func (s *Store) applyTxnOn(ctx context.Context, j *txnJournal, base string, failpoints bool, keep map[string]bool) (string, error) {
	dirs := map[string]bool{}
	contents := map[string][]byte{}
	for i, f := range j.Files {
		if keep[f.Path] {
			b, err := os.ReadFile(s.abs(filepath.Join(TxnDir, f.Staged)))
			if err != nil {
				return "", err
			}
			contents[f.Path] = b
			continue
		}
		h, err := s.diskHash(f.Path)
		if err != nil {
			return "", err
		}
		if h != f.New {
			if err := s.checkNoSymlinkParents(f.Path); err != nil {
				return "", err
			}
			p := s.abs(f.Path)
			if f.New == "" {
				if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return "", err
				}
				dirs[filepath.Dir(p)] = true
			} else {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					return "", err
				}
				if err := copyInto(ctx, s.abs(filepath.Join(TxnDir, f.Staged)), p); err != nil {
					return "", err
				}
			}
		}
		if failpoints && i == 0 && len(j.Files) > 1 {
			for d := range dirs {
				_ = SyncDir(d)
			}
			s.failpoint(FailTxnHalfFiles)
		}
	}
	for d := range dirs {
		if err := SyncDir(d); err != nil {
			return "", err
		}
	}
	if failpoints {
		s.failpoint(FailTxnFiles)
	}
	paths := make([]string, 0, len(j.Files))
	for _, f := range j.Files {
		paths = append(paths, f.Path)
	}
	sort.Strings(paths)
	hash, err := s.Repo.Commit(ctx, gitstore.CommitRequest{
		Paths: paths, Message: j.Message, Author: j.Author, When: s.now(),
		CheckBase: true, Base: base, Contents: contents,
	})
	if err != nil {
		return hash, err
	}
	// The committed marks are kept locally too: a later revert or reset of
	// state.json does not bring an id back into use.
	for _, f := range j.Files {
		if f.Path == StatePath && f.New != "" {
			var st State
			if b, err := os.ReadFile(s.abs(filepath.Join(TxnDir, f.Staged))); err == nil && json.Unmarshal(b, &st) == nil {
				_ = s.raiseLocalMarks(ctx, st.LastID) // a cache: best effort
			}
		}
	}
	return hash, nil
}

// copyInto replaces dst with a copy of src (temp file, fsync, rename).
func copyInto(ctx context.Context, src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return WriteFileAtomicFunc(ctx, dst, ModeOf(dst), func(f *os.File) error {
		_, err := io.Copy(f, in)
		return err
	})
}

// recoveryPlan is what recovery (and a reader's view) makes of a
// transaction a killed process left, HEAD being its base.
type recoveryPlan struct {
	forward bool              // every file can reach its new content: finish it
	edited  []string          // files a person changed since the crash
	onNew   map[string]bool   // edited files whose edit stays on disk, on the new content
	merged  map[string][]byte // edited files made on the old content: memctl's change merged in, for the disk
}

// planRecovery decides whether an interrupted transaction on its base can
// be finished: every file holds its old content (and its staged new
// content is intact), its new content, a person's edit made on top of the
// new content (memctl's added lines are there, its removed lines gone), or
// an edit made on the old content (they discarded memctl's half-written
// bytes) that memctl's change merges with (mergeOnto). An edit that
// conflicts with memctl's change means undo.
func (s *Store) planRecovery(ctx context.Context, j *txnJournal) recoveryPlan {
	return planRecoveryIn(s.Dir, j, func(f *txnFile) ([]byte, bool) { return baseContent(ctx, s.Repo, j, f) })
}

// planRecoveryIn is planRecovery for the memory in dir, for a reader or a
// writer: oldOf reads a file's old content from the base commit when a
// person's in-place write changed its backup (a hard link).
func planRecoveryIn(dir string, j *txnJournal, oldOf func(*txnFile) ([]byte, bool)) recoveryPlan {
	txnDir := filepath.Join(dir, filepath.FromSlash(TxnDir))
	rp := recoveryPlan{forward: true, onNew: map[string]bool{}}
	for _, f := range j.Files {
		disk, err := ReadMemoryFile(dir, f.Path)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			rp.forward = false
			rp.edited = append(rp.edited, f.Path)
			continue
		}
		h := contentHash(disk, exists)
		if h == f.New {
			continue
		}
		staged, stagedOK := readTxnCopy(txnDir, f.Staged, f.New)
		if h == f.Old && stagedOK {
			continue
		}
		rp.edited = append(rp.edited, f.Path)
		if !stagedOK || f.New == "" || !exists {
			rp.forward = false
			continue
		}
		old, ok := journalOld(txnDir, f, oldOf)
		if !ok {
			rp.forward = false
			continue
		}
		if editedOnTop(f.Path, old, staged, disk) {
			rp.onNew[f.Path] = true
		} else if merged, ok := mergeOnto(f.Path, old, staged, disk); ok {
			// An edit made on the old content that memctl's change merges
			// with: the file gets both, and memctl commits its own
			// content under the person's edit.
			rp.onNew[f.Path] = true
			if rp.merged == nil {
				rp.merged = map[string][]byte{}
			}
			rp.merged[f.Path] = merged
		} else {
			rp.forward = false
		}
	}
	return rp
}

// editedOnTop reports whether edited derives from new rather than old:
// more than half of new's changes to old are still there. For memory files
// the changes are entries: ids new added (still present, with memctl's
// text or a close edit of it), ids it removed (still absent), entries it
// rewrote (memctl's text, or an edit nearer to it than to the old text).
// For other files, non-blank lines added and removed.
func editedOnTop(path string, old, new, edited []byte) bool {
	// Votes in halves: 2 = the change is there, 1 = it cannot be told (an
	// entry memctl added is there with unrelated text: a person may have
	// used the same id for their own entry).
	changes, kept := 0, 0
	vote := func(v int) {
		changes += 2
		kept += v
	}
	if strings.HasSuffix(path, ".md") {
		ids := func(b []byte) map[string]string {
			m := map[string]string{}
			for _, e := range ParseDoc(path, b).Entries {
				if e.ID != "" {
					m[e.ID] = e.Raw
				}
			}
			return m
		}
		o, n, e := ids(old), ids(new), ids(edited)
		// Lines outside entries (headings, the topic index) count too.
		lo, ln, le := outsideEntries(path, old), outsideEntries(path, new), outsideEntries(path, edited)
		for l := range ln {
			if !lo[l] {
				vote(2 * boolInt(le[l]))
			}
		}
		for l := range lo {
			if !ln[l] {
				vote(2 * boolInt(!le[l]))
			}
		}
		for id, raw := range n {
			oraw, inOld := o[id]
			eraw, inEdited := e[id]
			switch {
			case !inOld && inEdited && holdsEditOf(eraw, raw):
				vote(2) // memctl's entry, maybe with a typo fixed
			case !inOld && inEdited:
				vote(1)
			case !inOld:
				vote(0)
			case oraw == raw:
			case !inEdited || eraw == raw || nearerTo(eraw, raw, oraw):
				vote(2)
			case nearerTo(eraw, oraw, raw):
				vote(0)
			default:
				vote(1) // as near to either text: an edit of which is unknown
			}
		}
		for id := range o {
			if _, inNew := n[id]; !inNew {
				if _, inEdited := e[id]; inEdited {
					vote(0)
				} else {
					vote(2)
				}
			}
		}
	} else {
		lines := func(b []byte) map[string]bool {
			m := map[string]bool{}
			for _, l := range strings.Split(string(b), "\n") {
				if strings.TrimSpace(l) != "" {
					m[l] = true
				}
			}
			return m
		}
		o, n, e := lines(old), lines(new), lines(edited)
		for l := range n {
			if !o[l] {
				vote(2 * boolInt(e[l]))
			}
		}
		for l := range o {
			if !n[l] {
				vote(2 * boolInt(!e[l]))
			}
		}
	}
	// More than half of memctl's changes are there: the edit was made on
	// top of them.
	return changes > 0 && 2*kept > changes
}

// outsideEntries returns the non-blank lines of a memory file that belong
// to no entry.
func outsideEntries(path string, src []byte) map[string]bool {
	d := ParseDoc(path, src)
	out := map[string]bool{}
	i := 0
	for off := 0; off < len(src); {
		end := bytes.IndexByte(src[off:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += off + 1
		}
		for i < len(d.Entries) && d.Entries[i].End <= off {
			i++
		}
		inEntry := i < len(d.Entries) && d.Entries[i].Start <= off && off < d.Entries[i].End
		if l := strings.TrimRight(string(src[off:end]), "\r\n"); !inEntry && strings.TrimSpace(l) != "" {
			out[l] = true
		}
		off = end
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rollbackTxn puts back every file that holds the transaction's new
// content: the replaced content when HEAD is still the base (backups),
// else HEAD's content, unless HEAD itself holds the new content (a person
// committed it). Files holding anything else are a person's and are kept,
// but one the person edited on top of memctl's bytes has memctl's change
// taken out of it (their edit stays), so the next hand-edit commit holds
// only what they wrote. Files a person committed with memctl's change in
// them (git commit -a after the crash) get it taken out in a commit of
// memctl's (undoCommittedPart), so the write is undone whole. It returns
// the files so cleaned and those so taken out.
func (s *Store) rollbackTxn(ctx context.Context, j *txnJournal, onBase bool) (cleaned, takenOut []string, err error) {
	var committed []*txnFile // files a person committed with memctl's change in them
	for _, f := range j.Files {
		h, err := s.diskHash(f.Path)
		if err != nil {
			return cleaned, nil, err
		}
		if f.New == f.Old {
			continue
		}
		var want []byte
		exists := false
		if !onBase {
			// What a person committed is looked at whatever the disk holds:
			// an undo of it killed before its commit left the old content
			// on disk, and the commit is still owed.
			if want, exists, err = s.Repo.ReadHead(ctx, f.Path); err != nil {
				return cleaned, nil, err
			}
			if contentHash(want, exists) == f.New || exists && s.holdsTxnChange(ctx, j, f, want) {
				committed = append(committed, f)
				continue
			}
		}
		if h == f.Old {
			continue
		}
		if onBase && f.Old != "" {
			if want, err = os.ReadFile(s.abs(filepath.Join(TxnDir, f.Backup))); err != nil {
				return cleaned, nil, fmt.Errorf("restore %s: %w", f.Path, err)
			}
			exists = true
		}
		if !exists {
			want = nil
		}
		if h != f.New {
			ok, err := s.takeOutOfEdit(ctx, j, f, want)
			if err != nil {
				return cleaned, nil, err
			}
			if ok {
				cleaned = append(cleaned, f.Path)
			}
			continue
		}
		if err := s.writeFile(ctx, f.Path, want); err != nil {
			return cleaned, nil, err
		}
	}
	if len(committed) > 0 {
		if takenOut, err = s.undoCommittedPart(ctx, j, committed); err != nil {
			return cleaned, nil, err
		}
	}
	return cleaned, takenOut, nil
}

// holdsTxnChange reports whether a person's version of a transaction's
// memory file holds its change with edits of theirs on top
// (holdsChanges).
func (s *Store) holdsTxnChange(ctx context.Context, j *txnJournal, f *txnFile, theirs []byte) bool {
	old, new, ok := s.txnSides(ctx, j, f)
	return ok && new != nil && holdsChanges(f.Path, old, new, theirs)
}

// undoCommittedPart takes an undone transaction's change out of files a
// person committed with it (git commit -a after the crash took memctl's
// half-written files), in a commit of memctl's on top of HEAD: otherwise
// half of the write stays committed (an import run again would duplicate
// it) and its ledger lines say its candidates were consumed (the next run
// would drop them unapplied). Edits of the person's in those files stay.
// state.json keeps its high-water marks (lowering them could hand an id
// out twice). A file whose change cannot be taken out cleanly is left as
// it is. It returns the files changed.
func (s *Store) undoCommittedPart(ctx context.Context, j *txnJournal, files []*txnFile) ([]string, error) {
	head, err := s.Repo.HeadHash(ctx)
	if err != nil {
		return nil, err
	}
	subject, _, _ := strings.Cut(j.Message, "\n")
	u := &txnJournal{ID: j.ID + "-undo", Base: head, Author: s.Signature()}
	keep := map[string]bool{}
	var paths []string
	for i, f := range files {
		if f.Path == StatePath {
			continue
		}
		old, new, ok := s.txnSides(ctx, j, f)
		theirs, exists, err := s.Repo.ReadHead(ctx, f.Path)
		if err != nil {
			return nil, err
		}
		if !ok || !exists {
			continue
		}
		target, ok := takeOutOnto(f.Path, new, old, theirs)
		if !ok {
			continue
		}
		disk, err := ReadMemoryFile(s.Dir, f.Path)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if err != nil && target != nil {
			continue // the person deleted it since: that stays theirs
		}
		if err == nil && !bytes.Equal(disk, theirs) {
			// An uncommitted edit since: it keeps what it changed.
			if target == nil {
				continue
			}
			onDisk, ok := takeOutOnto(f.Path, theirs, target, disk)
			if !ok {
				continue
			}
			if err := s.writeFile(ctx, f.Path, onDisk); err != nil {
				return nil, err
			}
			keep[f.Path] = true
		}
		nf := &txnFile{Path: f.Path, Old: contentHash(theirs, true), New: contentHash(target, target != nil)}
		if target != nil {
			nf.Staged = fmt.Sprintf("%s-undo-%d", j.ID, i+1)
			if err := WriteFileAtomic(ctx, s.abs(filepath.Join(TxnDir, nf.Staged)), target, PrivateFileMode); err != nil {
				return nil, err
			}
		}
		u.Files = append(u.Files, nf)
		paths = append(paths, f.Path)
	}
	if len(u.Files) == 0 {
		return nil, nil
	}
	u.Message, err = s.message(CommitMessage{
		Subject: "recover: take an undone write out of a person's commit",
		Body: fmt.Sprintf("The write %q was interrupted and could not be finished; a person's commit (%.12s) holds part of it (%s), which this commit takes out, so the write is undone whole. Its candidates stay queued.",
			subject, head, strings.Join(paths, ", ")),
		Op: "recover",
	})
	if err != nil {
		return nil, err
	}
	if _, err := s.applyTxnOn(ctx, u, head, false, keep); err != nil {
		return nil, err
	}
	return paths, nil
}

// takeOutOfEdit removes an undone transaction's change from a file a
// person edited on top of it, or that still holds some of memctl's
// entries as memctl wrote them (the person deleted or edited the others):
// the change new → target (HEAD's or the backup's content; nil for a file
// the transaction created) is merged into their version, and entries the
// person changed stay theirs (takeOutOnto). A file they edited on the old
// content, or one the merge cannot settle, is left as it is.
func (s *Store) takeOutOfEdit(ctx context.Context, j *txnJournal, f *txnFile, target []byte) (bool, error) {
	old, new, ok := s.txnSides(ctx, j, f)
	if !ok || new == nil {
		return false, nil
	}
	disk, err := ReadMemoryFile(s.Dir, f.Path)
	if err != nil {
		return false, nil
	}
	if !editedOnTop(f.Path, old, new, disk) && !holdsSomeOf(f.Path, old, new, disk) {
		return false, nil
	}
	merged, ok := takeOutOnto(f.Path, new, target, disk)
	if !ok {
		return false, nil
	}
	if bytes.Equal(merged, disk) {
		return false, nil // nothing of memctl's was left in it
	}
	if target == nil && len(bytes.TrimSpace(merged)) == 0 {
		merged = nil // a file memctl created that holds nothing of the person's
	} else if merged == nil {
		merged = []byte{}
	}
	return true, s.writeFile(ctx, f.Path, merged)
}

// recoverTxn finishes or undoes a transaction a killed process left. The
// caller holds the lock. It returns what it did, for the user.
func (s *Store) recoverTxn(ctx context.Context) (string, error) {
	j, err := s.readTxnJournal()
	if err != nil || j == nil {
		if err != nil {
			s.removeTxnFiles("")
			return "dropped an unreadable journal of an interrupted write (" + err.Error() + ")", nil
		}
		s.removeTxnFiles("") // staged files of a write killed before its journal
		return "", nil
	}
	subject, _, _ := strings.Cut(j.Message, "\n")
	landed, err := s.Repo.Landed(ctx, j.Base, TrailerTxn, j.ID, landedSearch)
	if err != nil {
		return "", err
	}
	if landed {
		s.removeTxnFiles(j.ID)
		if err := s.dequeue(ctx, j.Dequeue); err != nil {
			return "", err
		}
		return fmt.Sprintf("an interrupted write had committed (%q); finished its cleanup", subject), nil
	}
	head, err := s.Repo.HeadHash(ctx)
	if err != nil {
		return "", err
	}
	// Readers wait while the files change, as for a live transaction.
	unlockApply, err := s.lockApply(true)
	if err != nil {
		return "", err
	}
	defer unlockApply()
	var rp recoveryPlan
	if head == j.Base {
		rp = s.planRecovery(ctx, j)
	}
	if head == j.Base && rp.forward {
		for _, p := range slices.Sorted(maps.Keys(rp.merged)) {
			if err := s.writeFile(ctx, p, rp.merged[p]); err != nil {
				return "", fmt.Errorf("finish an interrupted write (%q): %w", subject, err)
			}
		}
		hash, err := s.applyTxn(ctx, j, false, rp.onNew)
		if err != nil {
			return "", fmt.Errorf("finish an interrupted write (%q): %w", subject, err)
		}
		s.removeTxnFiles(j.ID)
		if err := s.dequeue(ctx, j.Dequeue); err != nil {
			return "", err
		}
		kept := ""
		if len(rp.edited) > 0 {
			kept = "; edits made since (" + strings.Join(rp.edited, ", ") + ") are kept, to be committed as a hand edit"
		}
		if len(rp.merged) > 0 {
			kept += " (memctl's change merged into " + strings.Join(slices.Sorted(maps.Keys(rp.merged)), ", ") + ")"
		}
		if hash == "" {
			return fmt.Sprintf("an interrupted write (%q) changed nothing; dropped it%s", subject, kept), nil
		}
		return fmt.Sprintf("finished an interrupted write: %q (commit %.12s)%s", subject, hash, kept), nil
	}
	if head != j.Base {
		rest, keep, ok, err := s.unlandedRest(ctx, j, head)
		if err != nil {
			return "", err
		}
		if ok {
			// A person committed part of the write (git commit -a after
			// the crash, maybe with edits of their own since): the rest is
			// finished on top of their commit, so the write lands whole
			// rather than half; what they committed stays as they left it.
			hash := ""
			if len(rest.Files) > 0 {
				if hash, err = s.applyTxnOn(ctx, rest, head, false, keep); err != nil {
					return "", fmt.Errorf("finish an interrupted write (%q) on top of %.12s: %w", subject, head, err)
				}
			}
			s.removeTxnFiles(j.ID)
			if err := s.dequeue(ctx, j.Dequeue); err != nil {
				return "", err
			}
			if hash == "" {
				return fmt.Sprintf("an interrupted write (%q) was committed by a person (up to %.12s); finished its cleanup", subject, head), nil
			}
			kept := ""
			if len(keep) > 0 {
				kept = "; edits made on top of it since (" + strings.Join(slices.Sorted(maps.Keys(keep)), ", ") + ") are kept, to be committed as a hand edit"
			}
			return fmt.Sprintf("finished an interrupted write: %q on top of %.12s, a commit that holds part of it (commit %.12s)%s", subject, head, hash, kept), nil
		}
	}
	edited := rp.edited
	cleaned, takenOut, err := s.rollbackTxn(ctx, j, head == j.Base)
	if err != nil {
		return "", fmt.Errorf("undo an interrupted write (%q): %w", subject, err)
	}
	s.removeTxnFiles(j.ID)
	why := "HEAD moved since it was planned (" + shortHash(j.Base) + " → " + shortHash(head) + ")"
	if head == j.Base {
		why = strings.Join(edited, ", ") + " edited since"
	}
	if len(cleaned) > 0 {
		why += "; memctl's part taken out of the edits made on top of it (" + strings.Join(cleaned, ", ") + ")"
	}
	if len(takenOut) > 0 {
		why += "; the part a person had committed taken out in a commit of memctl's (" + strings.Join(takenOut, ", ") + ")"
	}
	return fmt.Sprintf("undid an interrupted write (%q): %s; its candidates stay queued (an interrupted import must be run again)", subject, why), nil
}

// landedSearchCommits bounds how many commits after a transaction's base
// recovery reads to find which of its files a person committed.
const landedSearchCommits = 200

// unlandedRest reports whether a person committed part of an interrupted
// write: some file of it reached a commit between its base and HEAD with
// the new content memctl had placed, or with an edit of the person's made
// on top of it (holdsChanges; it may have changed since: then it is the
// person's). ok is true when, in addition, every other file can be
// finished on top of HEAD: HEAD holds its old content, or a change a
// person committed that merges with memctl's (mergeOnto); and the disk
// holds HEAD's, memctl's old or new content, or (HEAD at the old content)
// an uncommitted edit made on top of memctl's bytes. rest is then the
// journal of those other files, their merged content staged, to be
// committed on top of HEAD; keep names the files whose disk holds such an
// uncommitted edit (committed from the staged content, left as they are
// on disk).
func (s *Store) unlandedRest(ctx context.Context, j *txnJournal, head string) (rest *txnJournal, keep map[string]bool, ok bool, err error) {
	commits, err := s.Repo.Log(ctx, nil, landedSearchCommits)
	if err != nil {
		return nil, nil, false, err
	}
	paths := map[string]*txnFile{}
	sides := map[string][2][]byte{} // old and new content, when both are at hand
	for _, f := range j.Files {
		paths[f.Path] = f
		if old, new, ok := s.txnSides(ctx, j, f); ok {
			sides[f.Path] = [2][]byte{old, new}
		}
	}
	landed := map[string]bool{}
	reachedBase := j.Base == "" // an unborn base: every commit is after it
	for _, c := range commits {
		if c.Hash == j.Base {
			reachedBase = true
			break
		}
		snap, err := s.Repo.FilesAt(ctx, c.Hash, func(p string) bool {
			if strings.HasSuffix(p, "/") {
				for q := range paths {
					if strings.HasPrefix(q, p) {
						return true
					}
				}
				return false
			}
			return paths[p] != nil
		})
		if err != nil {
			return nil, nil, false, err
		}
		for p, f := range paths {
			b, exists := snap.Files[p]
			if f.New == f.Old || landed[p] {
				continue
			}
			h := contentHash(b, exists)
			sd, known := sides[p]
			if h == f.New || (exists && h != f.Old && known && sd[1] != nil && holdsChanges(p, sd[0], sd[1], b)) {
				landed[p] = true
			}
		}
	}
	if !reachedBase || len(landed) == 0 {
		return nil, nil, false, nil
	}
	r := *j
	r.Files = nil
	for i, f := range j.Files {
		if landed[f.Path] {
			continue
		}
		theirs, exists, err := s.Repo.ReadHead(ctx, f.Path)
		if err != nil {
			return nil, nil, false, err
		}
		th := contentHash(theirs, exists)
		disk, err := ReadMemoryFile(s.Dir, f.Path)
		onDisk := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, nil, false, err
		}
		d := contentHash(disk, onDisk)
		if th == f.Old {
			if d != f.Old && d != f.New {
				// An uncommitted edit of the person's: made on top of
				// memctl's bytes, it stays on disk (a hand edit after
				// memctl's commit); made on the old content, it blocks.
				sd, known := sides[f.Path]
				if !onDisk || !known || sd[1] == nil || !editedOnTop(f.Path, sd[0], sd[1], disk) {
					return nil, nil, false, nil
				}
				if keep == nil {
					keep = map[string]bool{}
				}
				keep[f.Path] = true
				r.Files = append(r.Files, f)
				continue
			}
			if d != f.New && f.New != "" {
				sb, err := os.ReadFile(s.abs(filepath.Join(TxnDir, f.Staged)))
				if err != nil || contentHash(sb, true) != f.New {
					return nil, nil, false, nil
				}
			}
			r.Files = append(r.Files, f)
			continue
		}
		// A person committed a change of their own to this file: memctl's
		// change is merged onto it.
		sd, known := sides[f.Path]
		if !exists || f.New == "" || !known || (d != th && d != f.New) {
			return nil, nil, false, nil
		}
		merged, ok := mergeOnto(f.Path, sd[0], sd[1], theirs)
		if !ok {
			return nil, nil, false, nil
		}
		name := fmt.Sprintf("%s-%d.merged", j.ID, i+1)
		if err := WriteFileAtomic(ctx, s.abs(filepath.Join(TxnDir, name)), merged, PrivateFileMode); err != nil {
			return nil, nil, false, err
		}
		r.Files = append(r.Files, &txnFile{Path: f.Path, Old: th, New: contentHash(merged, true), Staged: name})
	}
	return &r, keep, true, nil
}

// txnSides returns a journal file's old and new content (new is nil when
// the write deletes the file) from the staged files, the old content from
// the base commit when its backup no longer holds it (the backup is a hard
// link until the file is replaced: a person's in-place write of a file not
// yet replaced changes it too). ok is false when either is not at hand.
func (s *Store) txnSides(ctx context.Context, j *txnJournal, f *txnFile) (old, new []byte, ok bool) {
	return journalSides(s.abs(TxnDir), f, func(f *txnFile) ([]byte, bool) { return baseContent(ctx, s.Repo, j, f) })
}

// journalSides is txnSides for the transaction files in txnDir, with base
// reading the old content from the base commit.
func journalSides(txnDir string, f *txnFile, base func(*txnFile) ([]byte, bool)) (old, new []byte, ok bool) {
	new, okNew := readTxnCopy(txnDir, f.Staged, f.New)
	old, okOld := journalOld(txnDir, f, base)
	return old, new, okOld && okNew
}

// journalOld returns a journal file's old content (nil when the write
// creates the file): its backup, else the base commit's through base.
func journalOld(txnDir string, f *txnFile, base func(*txnFile) ([]byte, bool)) ([]byte, bool) {
	if old, ok := readTxnCopy(txnDir, f.Backup, f.Old); ok {
		return old, true
	}
	return base(f)
}

// readTxnCopy reads a copy a transaction keeps in txnDir (staged content
// or a backup); ok only when it holds the content hash want. No content
// (want "") is nil and ok.
func readTxnCopy(txnDir, name, want string) ([]byte, bool) {
	if want == "" {
		return nil, true
	}
	b, err := os.ReadFile(filepath.Join(txnDir, name))
	return b, err == nil && contentHash(b, true) == want
}

// baseContent reads a journal file's old content from the transaction's
// base commit; ok is false when it does not hold the old content the
// journal names.
func baseContent(ctx context.Context, repo *gitstore.Repo, j *txnJournal, f *txnFile) ([]byte, bool) {
	if j.Base == "" {
		return nil, false
	}
	snap, err := repo.FilesAt(ctx, j.Base, func(p string) bool { return p == f.Path || strings.HasPrefix(f.Path, p) })
	if err != nil {
		return nil, false
	}
	b, exists := snap.Files[f.Path]
	return b, contentHash(b, exists) == f.Old
}

func shortHash(h string) string {
	if h == "" {
		return "(none)"
	}
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// diskHash hashes a memory file as it is on disk ("" if absent).
func (s *Store) diskHash(rel string) (string, error) {
	b, err := ReadMemoryFile(s.Dir, rel)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return contentHash(b, true), nil
}

func (s *Store) abs(rel string) string { return filepath.Join(s.Dir, filepath.FromSlash(rel)) }

func (s *Store) journalPath(id string) string {
	return s.abs(filepath.Join(TxnDir, id+".journal.json"))
}

func (s *Store) writeTxnJournal(ctx context.Context, j *txnJournal) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	return WriteFileAtomic(ctx, s.journalPath(j.ID), data, PrivateFileMode)
}

// readTxnJournal returns the journal of an interrupted transaction, or
// nil. With the lock held there is at most one.
func (s *Store) readTxnJournal() (*txnJournal, error) {
	return readTxnJournalIn(s.Dir)
}

func readTxnJournalIn(dir string) (*txnJournal, error) {
	ents, err := os.ReadDir(filepath.Join(dir, filepath.FromSlash(TxnDir)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".journal.json") || !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(TxnDir), e.Name()))
		if err != nil {
			return nil, err
		}
		var j txnJournal
		if err := json.Unmarshal(b, &j); err != nil || j.ID == "" || len(j.Files) == 0 {
			return nil, fmt.Errorf("%s: not a journal", e.Name())
		}
		for _, f := range j.Files {
			if err := checkRelPath(f.Path); err != nil {
				return nil, fmt.Errorf("%s: %w", e.Name(), err)
			}
			if strings.ContainsAny(f.Staged+f.Backup, "/\\") {
				return nil, fmt.Errorf("%s: bad staged file name", e.Name())
			}
		}
		return &j, nil
	}
	return nil, nil
}

// removeTxnFiles removes a transaction's journal and staged files (every
// transaction's when id is "": only called with the lock held, when no
// other transaction can be running).
func (s *Store) removeTxnFiles(id string) {
	d := s.abs(TxnDir)
	ents, err := os.ReadDir(d)
	if err != nil {
		return
	}
	var journal string
	for _, e := range ents {
		n := e.Name()
		if id != "" && !strings.HasPrefix(n, id+"-") && !strings.HasPrefix(n, id+".") {
			continue
		}
		if strings.HasSuffix(n, ".journal.json") {
			journal = n // last: its absence says the rest is gone
			continue
		}
		_ = os.Remove(filepath.Join(d, n))
	}
	if journal != "" {
		_ = os.Remove(filepath.Join(d, journal))
	}
	_ = SyncDir(d)
}

// linkOrCopy makes dst hold src's current content: a hard link (the
// rename that follows leaves the old inode to it), or a copy.
func linkOrCopy(src, dst string) error {
	_ = os.Remove(dst)
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, PrivateFileMode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
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
// takes no writer lock: while it is open no transaction applies, and the
// files of a transaction a killed process left half-applied are shown as
// the next writer will leave them, never as a mix: the whole new state
// when it can be finished (with a person's edits made since, merged in),
// else as they were before it.
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
	j, err := readTxnJournalIn(dir)
	if err != nil || j == nil {
		return v, nil // an unreadable journal is never applied: the disk is the state
	}
	// The state the next writer will most likely reach: the whole new
	// state when the transaction can be finished, else the old one.
	var repo *gitstore.Repo
	oldOf := func(f *txnFile) ([]byte, bool) {
		// Only when a person's in-place write changed a backup (rare): the
		// old content is read from the base commit, as the writer does.
		if repo == nil {
			r, err := gitstore.Open(context.Background(), dir)
			if err != nil {
				return nil, false
			}
			repo = r
		}
		return baseContent(context.Background(), repo, j, f)
	}
	rp := planRecoveryIn(dir, j, oldOf)
	forward := rp.forward
	txnDir := filepath.Join(dir, filepath.FromSlash(TxnDir))
	sides := func(f *txnFile) (old, new []byte, ok bool) { return journalSides(txnDir, f, oldOf) }
	// HEAD moved since the write was planned (a person's commit or pull):
	// the writer finishes the write on top only when HEAD holds part of it
	// (unlandedRest); otherwise it undoes it, back to HEAD's content.
	var headOf func(*txnFile) ([]byte, bool)
	if repo == nil {
		repo, _ = gitstore.Open(context.Background(), dir)
	}
	if repo != nil {
		if head, err := repo.HeadHash(context.Background()); err == nil && head != j.Base && !headHoldsPart(repo, j, sides) {
			forward = false
			headOf = func(f *txnFile) ([]byte, bool) {
				b, exists, err := repo.ReadHead(context.Background(), f.Path)
				return b, exists && err == nil
			}
		}
	}
	// undoTarget is what the undo leaves in a file holding memctl's bytes.
	undoTarget := func(f *txnFile) (data []byte, exists, ok bool) {
		if headOf != nil {
			data, exists = headOf(f)
			return data, exists, true
		}
		data, ok = journalOld(txnDir, f, oldOf)
		return data, ok && f.Old != "", ok
	}
	for _, f := range j.Files {
		b, err := ReadMemoryFile(dir, f.Path)
		exists := err == nil
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			continue
		}
		h := contentHash(b, exists)
		of := &overlayFile{}
		switch {
		case forward && rp.merged[f.Path] != nil:
			of.data, of.exists = rp.merged[f.Path], true
		case forward && h == f.Old && h != f.New:
			if f.New != "" {
				nb, ok := readTxnCopy(txnDir, f.Staged, f.New)
				if !ok {
					continue
				}
				of.data, of.exists = nb, true
			}
		case !forward && h == f.New && h != f.Old:
			data, exists, ok := undoTarget(f)
			if !ok {
				continue
			}
			of.data, of.exists = data, exists
		case !forward && exists && h != f.Old && f.New != "":
			// A person's edit on top of memctl's bytes, which the undo
			// takes memctl's part out of (takeOutOfEdit).
			ob, nb, ok := sides(f)
			if !ok {
				continue
			}
			if !editedOnTop(f.Path, ob, nb, b) && !holdsSomeOf(f.Path, ob, nb, b) {
				continue
			}
			target, targetExists, ok := undoTarget(f)
			if !ok {
				continue
			}
			if !targetExists {
				target = nil
			}
			merged, ok := takeOutOnto(f.Path, nb, target, b)
			if !ok || bytes.Equal(merged, b) {
				continue
			}
			if target != nil || len(bytes.TrimSpace(merged)) > 0 {
				of.data, of.exists = merged, true
			}
		default:
			continue
		}
		if v.overlay == nil {
			v.overlay = map[string]*overlayFile{}
		}
		v.overlay[f.Path] = of
	}
	return v, nil
}

// headHoldsPart reports whether HEAD holds part of a pending write: a file
// with memctl's new content, or with its change and edits of a person's on
// top (holdsChanges), as recovery counts a person's commit of it.
func headHoldsPart(repo *gitstore.Repo, j *txnJournal, sides func(*txnFile) (old, new []byte, ok bool)) bool {
	for _, f := range j.Files {
		if f.New == f.Old {
			continue
		}
		b, exists, err := repo.ReadHead(context.Background(), f.Path)
		if err != nil {
			return true // cannot tell: keep the plan the disk gives
		}
		if contentHash(b, exists) == f.New {
			return true
		}
		if !exists || f.New == "" {
			continue
		}
		ob, nb, ok := sides(f)
		if !ok {
			continue
		}
		if holdsChanges(f.Path, ob, nb, b) {
			return true
		}
	}
	return false
}

// Close releases the view.
func (v *ReadView) Close() { v.unlock() }

// Overlaid reports whether the view hides a half-applied transaction (its
// files differ from the disk; caches keyed on the disk must not be used).
func (v *ReadView) Overlaid() bool { return len(v.overlay) > 0 }

// ReadFile reads a memory-relative file as ReadMemoryFile does, through
// the view.
func (v *ReadView) ReadFile(rel string) ([]byte, error) {
	if of, ok := v.overlay[rel]; ok {
		if !of.exists {
			return nil, &fs.PathError{Op: "open", Path: rel, Err: fs.ErrNotExist}
		}
		return bytes.Clone(of.data), nil
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
