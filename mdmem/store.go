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

	// AllowConflicts lets Lock go on while a merge of memory files is
	// unfinished (conflict markers, unmerged index entries): for the
	// commands that finish such a merge (resolve, sync). Every other
	// writer is refused (CheckConflicts).
	AllowConflicts bool

	locked  bool
	settle  RecoverChoice  // how Lock's recovery settles edits that do not merge
	cleaned *forgetCleanup // what the last forget's cleanup removed
}

// State is .memctl/state.json.
type State struct {
	// NextID maps an id prefix to the highest number ever allocated.
	LastID map[string]int `json:"last_id"`

	// random is set by ReadState when [git] ids = "random": the ids a
	// new random id must avoid besides those in the memory.
	random map[string]bool
}

// Clone returns a copy of the state that shares nothing with st.
func (st *State) Clone() *State {
	cp := &State{LastID: make(map[string]int, len(st.LastID))}
	for k, v := range st.LastID {
		cp.LastID[k] = v
	}
	if st.random != nil {
		cp.random = make(map[string]bool, len(st.random))
		for k := range st.random {
			cp.random[k] = true
		}
	}
	return cp
}

// localMarksFile is IDMarksPath: the high-water marks, and the random ids
// this machine saw (minted, in the memory at a write, or named by the
// history when the file was made).
type localMarksFile struct {
	LastID map[string]int `json:"last_id"`
	Random []string       `json:"random,omitempty"`
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
// middle of (see Recovered). While a git merge of memory files is
// unfinished it refuses with a *ConflictError, changing nothing (unless
// AllowConflicts).
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
	if !s.AllowConflicts {
		if err := s.CheckConflicts(ctx); err != nil {
			_ = repoUnlock()
			return nil, err
		}
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
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		if err := json.Unmarshal(data, st); err != nil {
			return nil, stateError(err)
		}
	}
	if st.LastID == nil {
		st.LastID = map[string]int{}
	}
	if err := st.check(); err != nil {
		return st, err
	}
	marks := s.localMarks()
	for p, n := range marks.LastID {
		st.LastID[p] = max(st.LastID[p], n)
	}
	return st, s.readRandomScheme(st, marks)
}

// readRandomScheme turns on random ids in st when the config asks for
// them, with the ids they must avoid: the tombstones' and the local
// marks' (the memory's own are added by NewIDAllocator).
func (s *Store) readRandomScheme(st *State, marks localMarksFile) error {
	if s.Config.Git.IDs != IDsRandom {
		return nil
	}
	st.random = map[string]bool{}
	for _, id := range marks.Random {
		st.random[id] = true
	}
	data, err := os.ReadFile(s.abs(TombstonesPath))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for rest := data; len(rest) > 0; {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		var ts struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(line, &ts) == nil && ts.ID != "" {
			st.random[ts.ID] = true
		}
	}
	return nil
}

// localMarks reads the local id marks (IDMarksPath); a missing or damaged
// file counts as none.
func (s *Store) localMarks() localMarksFile {
	data, err := os.ReadFile(s.abs(IDMarksPath))
	if err != nil {
		return localMarksFile{}
	}
	var f localMarksFile
	if json.Unmarshal(data, &f) != nil || (&State{LastID: f.LastID}).check() != nil {
		return localMarksFile{}
	}
	return f
}

// raiseLocalMarks raises the local id marks to marks where they are
// higher, and adds the random ids it has not seen (written atomically,
// only when something changes).
func (s *Store) raiseLocalMarks(ctx context.Context, marks map[string]int, random ...string) error {
	cur := s.localMarks()
	out := localMarksFile{LastID: map[string]int{}, Random: cur.Random}
	for p, n := range cur.LastID {
		out.LastID[p] = n
	}
	rose := false
	for p, n := range marks {
		if n > out.LastID[p] && n <= MaxIDNumber {
			out.LastID[p], rose = n, true
		}
	}
	if len(random) > 0 {
		seen := make(map[string]bool, len(cur.Random))
		for _, id := range cur.Random {
			seen[id] = true
		}
		for _, id := range random {
			if !seen[id] {
				seen[id], rose = true, true
				out.Random = append(out.Random, id)
			}
		}
	}
	if !rose {
		return nil
	}
	sort.Strings(out.Random)
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
	marks := localMarksFile{LastID: map[string]int{}}
	random := map[string]bool{}
	if _, err := s.Repo.Log(ctx, func(c *gitstore.Commit) bool {
		for _, v := range c.Trailers[TrailerEntry] {
			for _, id := range strings.Split(strings.TrimSpace(v), "..") {
				p, n, ok := splitID(id)
				switch {
				case ok && n < 0:
					random[id] = true
				case ok && n > marks.LastID[p] && n <= MaxIDNumber:
					marks.LastID[p] = n
				}
			}
		}
		return false
	}, 0); err != nil {
		return err
	}
	for id := range random {
		marks.Random = append(marks.Random, id)
	}
	sort.Strings(marks.Random)
	data, err := json.MarshalIndent(&marks, "", "  ")
	if err != nil {
		return err
	}
	if err := EnsureDir(s.Dir, CacheDir); err != nil {
		return err
	}
	return WriteFileAtomic(ctx, s.abs(IDMarksPath), append(data, '\n'), PrivateFileMode)
}

// idMarks returns the highest id number per prefix present in m, and
// its random ids.
func idMarks(m *Memory) (map[string]int, []string) {
	out := map[string]int{}
	var random []string
	for _, e := range m.Entries() {
		p, n, ok := splitID(e.ID)
		switch {
		case ok && n < 0:
			random = append(random, e.ID)
		case ok && n > out[p]:
			out[p] = n
		}
	}
	return out, random
}

// IDAllocator hands out entry ids that were never used: above both the
// recorded high-water mark and every id present in the memory, or, with
// [git] ids = "random" (the state ReadState returns says so), random ids
// that no entry of the memory, no tombstone and no local mark holds.
type IDAllocator struct {
	state *State
	dirty bool
	taken map[string]bool // with random ids: the ids to avoid
}

// NewIDAllocator starts from the state and the ids in m.
func NewIDAllocator(st *State, m *Memory) *IDAllocator {
	a := &IDAllocator{state: st}
	if st.random != nil {
		a.taken = make(map[string]bool, len(st.random)+len(m.Entries()))
		for id := range st.random {
			a.taken[id] = true
		}
	}
	for _, e := range m.Entries() {
		p, n, ok := splitID(e.ID)
		if ok && n > st.LastID[p] {
			st.LastID[p] = n
		}
		if ok && a.taken != nil {
			a.taken[e.ID] = true
		}
	}
	return a
}

// Next returns a fresh id for a category.
func (a *IDAllocator) Next(category string) (string, error) {
	c, ok := CategoryByName(category)
	if !ok {
		return "", unknownCategoryError(category)
	}
	return a.next(c.Name, c.Prefix)
}

// next returns a fresh id with the prefix; name names its kind in errors.
func (a *IDAllocator) next(name, prefix string) (string, error) {
	if a.taken != nil {
		id, err := NewRandomID(prefix, func(id string) bool { return a.taken[id] })
		if err != nil {
			return "", err
		}
		a.taken[id] = true
		return id, nil
	}
	if a.state.LastID[prefix] >= MaxIDNumber {
		return "", fmt.Errorf("no %s id left: %s-%d is the largest id memctl writes", name, prefix, MaxIDNumber)
	}
	a.state.LastID[prefix]++
	a.dirty = true
	return FormatID(prefix, a.state.LastID[prefix]), nil
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
