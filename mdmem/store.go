package mdmem

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/memctl/memctl/mdmem/gitstore"
	"github.com/memctl/memctl/templates"
)

// StatePath is the memory-relative path of memctl's committed state: the id
// high-water marks that keep ids from ever being reused.
const StatePath = ".memctl/state.json"

// MarkerDir is the directory whose presence marks a memory directory.
const MarkerDir = ".memctl"

// Trailer keys memctl writes into its commit messages.
const (
	TrailerEntry    = "Memctl-Entry"    // an entry id the commit touched
	TrailerConsumed = "Memctl-Consumed" // a candidate id the commit consumed
	TrailerOp       = "Memctl-Op"       // the command that made the commit
)

// ErrNotMemory is returned when a directory is not a memory directory.
var ErrNotMemory = errors.New("not a memctl memory directory")

// ErrLocked is returned (wrapped) when another memctl holds the repo lock.
var ErrLocked = gitstore.ErrLocked

// Store is an opened memory directory: its configuration, its git
// repository and the lock that serialises writers.
type Store struct {
	Dir    string
	Config *Config
	Repo   *gitstore.Repo
	Now    func() time.Time
	// Recovered says what Lock did to finish interrupted writes; commands
	// print it.
	Recovered []string
}

// State is .memctl/state.json.
type State struct {
	// NextID maps an id prefix to the highest number ever allocated.
	LastID map[string]int `json:"last_id"`
}

// Open opens the memory directory dir, which must hold .memctl/.
func Open(ctx context.Context, dir string) (*Store, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if fi, err := os.Stat(filepath.Join(abs, MarkerDir)); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s: %w (run `memctl init %s` first)", abs, ErrNotMemory, dir)
	}
	cfg, err := LoadConfig(abs)
	if err != nil {
		return nil, err
	}
	repo, err := gitstore.Open(ctx, abs)
	if err != nil {
		return nil, err
	}
	return &Store{Dir: abs, Config: cfg, Repo: repo, Now: time.Now}, nil
}

// Lock takes the exclusive writer lock, waiting up to the configured
// lock_wait, and finishes a write an earlier process was killed in the
// middle of (see Recovered).
func (s *Store) Lock(ctx context.Context) (unlock func() error, err error) {
	if err := s.Config.Check("git"); err != nil {
		return nil, err
	}
	unlock, err = s.Repo.Lock(ctx, s.Config.Git.LockWait.Duration)
	if err != nil {
		return nil, err
	}
	if err := checkWriteDirs(s.Dir); err != nil {
		_ = unlock()
		return nil, err
	}
	s.Recovered = append(s.Recovered, s.sweepTemps()...)
	msg, err := s.recoverWrite(ctx)
	if err != nil {
		_ = unlock()
		return nil, err
	}
	if msg != "" {
		s.Recovered = append(s.Recovered, msg)
	}
	return unlock, nil
}

// sweepTemps removes the temp files of atomic writes (".<name>.tmp-*") that
// a killed writer left in the memory directory, topics/ and .memctl/. The
// caller holds the lock, and every writer of those places writes under it
// — except `add`, whose queue directory is therefore left alone (its
// files are git-ignored).
func (s *Store) sweepTemps() []string {
	var removed []string
	var sweep func(rel string)
	sweep = func(rel string) {
		ents, err := os.ReadDir(filepath.Join(s.Dir, filepath.FromSlash(rel)))
		if err != nil {
			return
		}
		for _, e := range ents {
			n := e.Name()
			switch {
			case e.IsDir() && strings.HasPrefix(rel, MarkerDir) && !strings.HasPrefix(n, "."):
				if path.Join(rel, n) != QueueDir {
					sweep(path.Join(rel, n))
				}
			case e.Type().IsRegular() && strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp-"):
				if os.Remove(filepath.Join(s.Dir, filepath.FromSlash(rel), n)) == nil {
					removed = append(removed, fmt.Sprintf("removed %s, left by an interrupted write", path.Join(rel, n)))
				}
			}
		}
	}
	sweep(".")
	sweep(TopicDir)
	sweep(MarkerDir)
	sweep(QueueDir + "/held")
	// In the queue, only temp files old enough that no `add` can still be
	// writing them (an add takes milliseconds).
	qd := filepath.Join(s.Dir, filepath.FromSlash(QueueDir))
	ents, _ := os.ReadDir(qd)
	for _, e := range ents {
		n := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(n, ".") || !strings.Contains(n, ".tmp-") {
			continue
		}
		if fi, err := e.Info(); err == nil && s.Now().Sub(fi.ModTime()) > staleQueueTemp && os.Remove(filepath.Join(qd, n)) == nil {
			removed = append(removed, fmt.Sprintf("removed %s/%s, left by an interrupted add", QueueDir, n))
		}
	}
	return removed
}

// staleQueueTemp is the age past which a queue temp file is an interrupted
// add's leftover.
const staleQueueTemp = 10 * time.Minute

// Load parses the memory files as they are on disk now.
func (s *Store) Load(ctx context.Context) (*Memory, error) { return Load(ctx, s.Dir) }

// Signature is the identity memctl commits as.
func (s *Store) Signature() gitstore.Signature {
	return gitstore.Signature{Name: s.Config.Git.AuthorName, Email: s.Config.Git.AuthorEmail}
}

// ReadState reads .memctl/state.json (an empty state if absent).
func (s *Store) ReadState() (*State, error) {
	st := &State{LastID: map[string]int{}}
	data, err := os.ReadFile(filepath.Join(s.Dir, filepath.FromSlash(StatePath)))
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, stateError(err)
	}
	if st.LastID == nil {
		st.LastID = map[string]int{}
	}
	return st, st.check()
}

// IDAllocator hands out entry ids that were never used: above both the
// recorded high-water mark and every id present in the memory.
type IDAllocator struct {
	state *State
	dirty bool
}

// NewIDAllocator starts from the state and the ids in m.
func NewIDAllocator(st *State, m *Memory) *IDAllocator {
	for _, e := range m.Entries() {
		if p, n, ok := splitID(e.ID); ok && n > st.LastID[p] {
			st.LastID[p] = n
		}
	}
	return &IDAllocator{state: st}
}

// Next returns a fresh id for a category.
func (a *IDAllocator) Next(category string) (string, error) {
	c, ok := CategoryByName(category)
	if !ok {
		return "", unknownCategoryError(category)
	}
	if a.state.LastID[c.Prefix] >= MaxIDNumber {
		return "", fmt.Errorf("no %s id left: %s-%d is the largest id memctl writes", c.Name, c.Prefix, MaxIDNumber)
	}
	a.state.LastID[c.Prefix]++
	a.dirty = true
	return FormatID(c.Prefix, a.state.LastID[c.Prefix]), nil
}

// StateFile returns the state's bytes if ids were allocated.
func (a *IDAllocator) StateFile() ([]byte, bool) {
	if !a.dirty {
		return nil, false
	}
	data, _ := json.MarshalIndent(a.state, "", "  ")
	return append(data, '\n'), true
}

// CommitMessage is a memctl commit: a subject, a body, and trailers that
// name the entries touched and the candidates consumed.
type CommitMessage struct {
	Subject  string
	Body     string
	Op       string
	Entries  []string
	Consumed []string
	Extra    [][2]string // further trailers, in order
}

// String renders the message with the embedded commit template.
func (m CommitMessage) String() string {
	out, err := m.Render(templates.Embedded("commit.tmpl"))
	if err != nil {
		panic(err) // the embedded template is tested
	}
	return out
}

// Trailers returns the message's trailer lines, "Key: value".
func (m CommitMessage) Trailers() []string {
	var tr []string
	if m.Op != "" {
		tr = append(tr, TrailerOp+": "+m.Op)
	}
	for _, id := range uniqueSorted(m.Entries) {
		tr = append(tr, TrailerEntry+": "+id)
	}
	for _, id := range uniqueSorted(m.Consumed) {
		tr = append(tr, TrailerConsumed+": "+id)
	}
	for _, kv := range m.Extra {
		tr = append(tr, kv[0]+": "+OneLine(kv[1]))
	}
	return tr
}

// Render renders the message with a commit template (templates/commit.tmpl
// or an override). Trailers the template leaves out are appended, since
// `memctl log` and consolidation read them.
func (m CommitMessage) Render(tmpl string) (string, error) {
	t, err := template.New("commit").Parse(tmpl)
	if err != nil {
		return "", fmt.Errorf("commit template: %w", err)
	}
	trailers := m.Trailers()
	var b strings.Builder
	err = t.Execute(&b, struct {
		Op, Subject, Body string
		Trailers          []string
	}{m.Op, OneLine(m.Subject), strings.TrimSpace(m.Body), trailers})
	if err != nil {
		return "", fmt.Errorf("commit template: %w", err)
	}
	out := strings.TrimRight(b.String(), "\n") + "\n"
	if strings.TrimSpace(out) == "" {
		return "", errors.New("commit template: the message is empty")
	}
	var missing []string
	for _, tr := range trailers {
		if !strings.Contains(out, tr+"\n") {
			missing = append(missing, tr)
		}
	}
	if len(missing) > 0 {
		out += "\n" + strings.Join(missing, "\n") + "\n"
	}
	return out, nil
}

// message renders msg with the memory's commit template.
func (s *Store) message(msg CommitMessage) (string, error) {
	tmpl, err := templates.Load(s.Dir, "commit.tmpl")
	if err != nil {
		return "", err
	}
	return msg.Render(tmpl)
}

func uniqueSorted(ids []string) []string {
	out := append([]string(nil), ids...)
	sort.Strings(out)
	n := 0
	for i, id := range out {
		if id != "" && (i == 0 || id != out[i-1]) {
			out[n] = id
			n++
		}
	}
	return out[:n]
}

// WriteJournalPath holds the intent of a write in progress: the full new
// content of every file and the commit message (in .memctl/cache, never
// committed). A write killed midway is rolled forward from it by the next
// writer, so it lands whole or not at all.
const WriteJournalPath = ".memctl/cache/write-journal.json"

type writeJournal struct {
	Files   map[string][]byte  `json:"files"` // nil content: delete
	Message string             `json:"message"`
	Author  gitstore.Signature `json:"author"`
}

// Write replaces the given memory-relative files atomically (a nil content
// deletes the file) and commits exactly those paths, in one commit. The
// caller holds the lock. It returns the commit hash, or "" if nothing
// changed. Once it starts writing it is not interrupted by ctx; if it fails
// (a git lock held, a full disk) it puts the files back as they were.
func (s *Store) Write(ctx context.Context, files map[string][]byte, msg CommitMessage) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	ctx = context.WithoutCancel(ctx)
	paths := make([]string, 0, len(files))
	old := map[string][]byte{}
	for p := range files {
		if err := checkRelPath(p); err != nil {
			return "", err
		}
		paths = append(paths, p)
		data, err := ReadMemoryFile(s.Dir, p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		old[p] = data
	}
	sort.Strings(paths)
	text, err := s.message(msg)
	if err != nil {
		return "", err
	}
	j := writeJournal{Files: files, Message: text, Author: s.Signature()}
	if err := s.writeJournal(ctx, &j); err != nil {
		return "", fmt.Errorf("write journal: %w", err)
	}
	hash, err := s.applyJournal(ctx, &j, paths)
	if err != nil {
		for _, p := range paths {
			_ = s.writeFile(ctx, p, old[p])
		}
		_ = s.removeJournal()
		return "", err
	}
	return hash, s.removeJournal()
}

func (s *Store) applyJournal(ctx context.Context, j *writeJournal, paths []string) (string, error) {
	for _, p := range paths {
		if err := s.writeFile(ctx, p, j.Files[p]); err != nil {
			return "", err
		}
	}
	return s.Repo.Commit(ctx, gitstore.CommitRequest{Paths: paths, Message: j.Message, Author: j.Author, When: s.Now()})
}

func (s *Store) journalFile() string {
	return filepath.Join(s.Dir, filepath.FromSlash(WriteJournalPath))
}

func (s *Store) writeJournal(ctx context.Context, j *writeJournal) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.journalFile()), 0o755); err != nil {
		return err
	}
	return WriteFileAtomic(ctx, s.journalFile(), data, 0o644)
}

func (s *Store) removeJournal() error {
	if err := os.Remove(s.journalFile()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// recoverWrite finishes a write that was killed midway (the caller holds
// the lock). If every journaled file is either as at HEAD or as journaled,
// it writes the rest and commits (roll forward). If a person has edited one
// of them since, their edit wins: the journal is dropped and nothing is
// written. It returns what it did, for the user.
func (s *Store) recoverWrite(ctx context.Context) (string, error) {
	data, err := os.ReadFile(s.journalFile())
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var j writeJournal
	if err := json.Unmarshal(data, &j); err != nil || len(j.Files) == 0 {
		return "dropped an unreadable journal of an interrupted write (it had not started writing)", s.removeJournal()
	}
	paths := make([]string, 0, len(j.Files))
	for p := range j.Files {
		if err := checkRelPath(p); err != nil {
			return "", fmt.Errorf("%s: %w", WriteJournalPath, err)
		}
		paths = append(paths, p)
		head, _, err := s.Repo.ReadHead(ctx, p)
		if err != nil {
			return "", err
		}
		disk, err := ReadMemoryFile(s.Dir, p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		if !bytes.Equal(disk, head) && !bytes.Equal(disk, j.Files[p]) {
			return fmt.Sprintf("dropped the journal of an interrupted write: %s was edited since", p), s.removeJournal()
		}
	}
	sort.Strings(paths)
	hash, err := s.applyJournal(ctx, &j, paths)
	if err != nil {
		return "", fmt.Errorf("finish an interrupted write: %w", err)
	}
	subject, _, _ := strings.Cut(j.Message, "\n")
	if hash == "" {
		return "", s.removeJournal() // it had been committed already
	}
	return fmt.Sprintf("finished an interrupted write: %q (commit %.12s)", subject, hash), s.removeJournal()
}

func (s *Store) writeFile(ctx context.Context, rel string, data []byte) error {
	if err := checkRelPath(rel); err != nil {
		return err
	}
	p := filepath.Join(s.Dir, filepath.FromSlash(rel))
	if err := s.checkNoSymlinkParents(rel); err != nil {
		return err
	}
	if data == nil {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return SyncDir(filepath.Dir(p))
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return WriteFileAtomic(ctx, p, data, 0o644)
}

// checkRelPath refuses absolute paths, "..", and anything but clean slash
// paths.
func checkRelPath(rel string) error {
	if rel == "" || strings.HasPrefix(rel, "/") || strings.Contains(rel, "\\") || filepath.ToSlash(filepath.Clean(rel)) != rel || rel == ".." || strings.HasPrefix(rel, "../") {
		return fmt.Errorf("refusing path %q: not a clean path inside the memory directory", rel)
	}
	return nil
}

// checkNoSymlinkParents refuses to write through a symlinked directory.
func (s *Store) checkNoSymlinkParents(rel string) error {
	dir := s.Dir
	parts := strings.Split(rel, "/")
	for _, part := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, part)
		fi, err := os.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("refusing to write %s: %s is a symlink or not a directory", rel, dir)
		}
	}
	fi, err := os.Lstat(filepath.Join(s.Dir, filepath.FromSlash(rel)))
	if err == nil && !fi.Mode().IsRegular() {
		return fmt.Errorf("refusing to write %s: it is a symlink or not a regular file", rel)
	}
	return nil
}

// ManagedPaths returns the memory-relative paths memctl commits: MEMORY.md,
// config, state and every topic file on disk.
func (s *Store) ManagedPaths() []string {
	return []string{MainFile, ConfigPath, StatePath, ".gitignore"}
}

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

// History returns the commits that name entry id in a Memctl-Entry trailer
// (all commits when id is ""), newest first, at most limit (0 = all).
func (s *Store) History(ctx context.Context, id string, limit int) ([]*gitstore.Commit, error) {
	return s.Repo.Log(ctx, func(c *gitstore.Commit) bool {
		if id == "" {
			return true
		}
		for _, v := range c.Trailers[TrailerEntry] {
			if TrailerNames(v, id) {
				return true
			}
		}
		return false
	}, limit)
}
