package mdmem

import (
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
	// Getenv and Exit default to the process's; failpoints use them.
	Getenv func(string) string
	Exit   func(code int)

	locked  bool
	settle  RecoverChoice  // how Lock's recovery settles edits that do not merge
	cleaned *forgetCleanup // what the last forget's cleanup removed
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
	repoUnlock, err := s.Repo.Lock(ctx, s.Config.Git.LockWait.Duration)
	if err != nil {
		return nil, err
	}
	if err := checkWriteDirs(s.Dir); err != nil {
		_ = repoUnlock()
		return nil, err
	}
	s.locked = true
	release := func() error {
		s.locked = false
		return repoUnlock()
	}
	s.Recovered = append(s.Recovered, s.sweepTemps()...)
	notes, err := s.recoverTxn(ctx)
	if err != nil {
		_ = release()
		return nil, err
	}
	s.Recovered = append(s.Recovered, notes...)
	if err := s.seedLocalMarks(ctx); err != nil {
		_ = release()
		return nil, err
	}
	return release, nil
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

// ReadState reads .memctl/state.json (an empty state if absent), with
// each high-water mark raised to the local marks (IDMarksPath).
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
	if err := st.check(); err != nil {
		return st, err
	}
	for p, n := range s.localMarks() {
		st.LastID[p] = max(st.LastID[p], n)
	}
	return st, nil
}

// localMarks reads the local id marks (IDMarksPath); a missing or damaged
// file counts as none.
func (s *Store) localMarks() map[string]int {
	data, err := os.ReadFile(s.abs(IDMarksPath))
	if err != nil {
		return nil
	}
	var st State
	if json.Unmarshal(data, &st) != nil || st.check() != nil {
		return nil
	}
	return st.LastID
}

// raiseLocalMarks raises the local id marks to marks where they are
// higher (written atomically, only when one rises).
func (s *Store) raiseLocalMarks(ctx context.Context, marks map[string]int) error {
	cur := s.localMarks()
	out := State{LastID: map[string]int{}}
	for p, n := range cur {
		out.LastID[p] = n
	}
	rose := false
	for p, n := range marks {
		if n > out.LastID[p] && n <= MaxIDNumber {
			out.LastID[p], rose = n, true
		}
	}
	if !rose {
		return nil
	}
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.abs(CacheDir), 0o755); err != nil {
		return err
	}
	return WriteFileAtomic(ctx, s.abs(IDMarksPath), append(data, '\n'), PrivateFileMode)
}

// seedLocalMarks creates the local id marks (IDMarksPath) where there are
// none (a fresh clone, a cleared cache) from every id the history's
// commits name (Memctl-Entry trailers): an id written by hand and deleted
// since, committed as a hand edit in another clone, is never handed out
// again. The caller holds the lock.
func (s *Store) seedLocalMarks(ctx context.Context) error {
	if _, err := os.Lstat(s.abs(IDMarksPath)); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	marks := map[string]int{}
	if _, err := s.Repo.Log(ctx, func(c *gitstore.Commit) bool {
		for _, id := range c.Trailers[TrailerEntry] {
			if p, n, ok := splitID(strings.TrimSpace(id)); ok && n > marks[p] && n <= MaxIDNumber {
				marks[p] = n
			}
		}
		return false
	}, 0); err != nil {
		return err
	}
	data, err := json.MarshalIndent(&State{LastID: marks}, "", "  ")
	if err != nil {
		return err
	}
	if err := EnsureDir(s.Dir, CacheDir); err != nil {
		return err
	}
	return WriteFileAtomic(ctx, s.abs(IDMarksPath), append(data, '\n'), PrivateFileMode)
}

// idMarks returns the highest id number per prefix present in m.
func idMarks(m *Memory) map[string]int {
	out := map[string]int{}
	for _, e := range m.Entries() {
		if p, n, ok := splitID(e.ID); ok && n > out[p] {
			out[p] = n
		}
	}
	return out
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

// Write replaces the given memory-relative files (a nil content deletes
// the file) and commits exactly those paths, in one transaction planned on
// the files as they are now. It takes the lock for the write unless the
// caller holds it. It returns the commit hash, or "" if nothing changed.
func (s *Store) Write(ctx context.Context, files map[string][]byte, msg CommitMessage) (string, error) {
	if !s.locked {
		unlock, err := s.Lock(ctx)
		if err != nil {
			return "", err
		}
		defer unlock()
	}
	tx, err := s.Begin(ctx)
	if err != nil {
		return "", err
	}
	defer tx.Abort()
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if err := tx.PutOnDisk(ctx, p, files[p]); err != nil {
			return "", err
		}
	}
	return tx.Commit(ctx, msg)
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
	return WriteFileAtomic(ctx, p, data, ModeOf(p))
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
