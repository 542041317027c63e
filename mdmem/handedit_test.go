package mdmem

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

const baseMain = `# Core profile

## User preferences
- [pref-001] Prefers tabs (user · 2026-01-01)
- [pref-002] Prefers short answers (user · 2026-01-02)

## Project constraints

## Key decisions
- [dec-001] Postgres for orders (review · 2026-01-03)

## Pending confirmation

# Topic index
- Databases → topics/db.md

# Archive
`

const baseDB = `# Databases

- [fact-001] The orders DB is on host db1 (review · 2026-01-04)
- [fact-002] Backups run nightly (review · 2026-01-05)
`

// handEditStore is a memory with baseMain and topics/db.md committed by
// memctl, and a person known to git.
func handEditStore(t *testing.T) *Store {
	t.Helper()
	s := newStore(t)
	t.Setenv("GIT_AUTHOR_NAME", "Pat Person")
	t.Setenv("GIT_AUTHOR_EMAIL", "pat@example.com")
	s.Now = func() time.Time { return time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC) }
	_, err := s.Write(context.Background(), map[string][]byte{MainFile: []byte(baseMain), "topics/db.md": []byte(baseDB)},
		CommitMessage{Subject: "test: base", Op: "test"})
	must(t, err)
	return s
}

func writeRel(t *testing.T, s *Store, rel, data string) {
	t.Helper()
	p := filepath.Join(s.Dir, filepath.FromSlash(rel))
	must(t, os.MkdirAll(filepath.Dir(p), 0o755))
	must(t, os.WriteFile(p, []byte(data), 0o644))
}

func readRel(t *testing.T, s *Store, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(s.Dir, filepath.FromSlash(rel)))
	must(t, err)
	return string(b)
}

func commitHandEdits(t *testing.T, s *Store) *HandEdit {
	t.Helper()
	ctx := context.Background()
	unlock, err := s.Lock(ctx)
	must(t, err)
	defer unlock()
	he, err := s.CommitHandEdits(ctx)
	if err != nil {
		t.Fatalf("CommitHandEdits: %v", err)
	}
	return he
}

// committedFiles lists the files a commit changed.
func committedFiles(t *testing.T, s *Store, rev string) []string {
	t.Helper()
	out := gitOut(t, s.Dir, "show", "--name-only", "--format=", rev)
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// TestHandEditCommitsOnlyMemoryFiles: editor and stray files in
// topics/ are never committed (nor their secrets, nor the ids of an
// autosave); they stay untracked and are reported as ignored.
func TestHandEditCommitsOnlyMemoryFiles(t *testing.T) {
	edited := strings.Replace(baseDB, "Backups run nightly", "Backups run hourly", 1)
	tests := []struct {
		name        string
		files       map[string]string // written after the base commit
		symlinks    map[string]string // name → target
		dirs        []string
		wantFiles   []string // in the person's commit
		wantIgnored []string
		wantIDs     []string // Memctl-Entry trailers
	}{
		{
			name:        "vim swap file and write test",
			files:       map[string]string{"topics/db.md": edited, "topics/.db.md.swp": "- [fact-077] only in the autosave\n", "topics/4913": ""},
			wantFiles:   []string{"topics/db.md"},
			wantIgnored: []string{"topics/.db.md.swp", "topics/4913"},
			wantIDs:     []string{"fact-002"},
		},
		{
			name:        "vim and emacs backups, emacs lock symlink",
			files:       map[string]string{"topics/db.md": edited, "topics/db.md~": baseDB + "- [fact-078] backup\n", "topics/#db.md#": "- [fact-079] emacs autosave\n"},
			symlinks:    map[string]string{"topics/.#db.md": "pat@host.1234:1700000000"},
			wantFiles:   []string{"topics/db.md"},
			wantIgnored: []string{"topics/#db.md#", "topics/.#db.md", "topics/db.md~"},
			wantIDs:     []string{"fact-002"},
		},
		{
			name:        "secret in a stray file",
			files:       map[string]string{MainFile: strings.Replace(baseMain, "Prefers tabs", "Prefers spaces", 1), "topics/scratch.env": "AWS_SECRET=abc\n"},
			wantFiles:   []string{MainFile},
			wantIgnored: []string{"topics/scratch.env"},
			wantIDs:     []string{"pref-001"},
		},
		{
			name:        "names memctl does not read, a subdirectory, a symlinked topic",
			files:       map[string]string{"topics/db.md": edited, "topics/Notes.md": "- [fact-080] x\n", "topics/readme.txt": "hi\n", "topics/old/db.md": baseDB},
			symlinks:    map[string]string{"topics/linked.md": "db.md"},
			wantFiles:   []string{"topics/db.md"},
			wantIgnored: []string{"topics/Notes.md", "topics/linked.md", "topics/old/", "topics/readme.txt"},
			wantIDs:     []string{"fact-002"},
		},
		{
			name:        "names git cannot record",
			files:       map[string]string{"topics/db.md": edited, "topics/back\\slash.md": "- [fact-081] x\n", "topics/new\nline.md": "- [fact-082] x\n"},
			wantFiles:   []string{"topics/db.md"},
			wantIgnored: []string{"topics/back\\slash.md", "topics/new\nline.md"},
			wantIDs:     []string{"fact-002"},
		},
		{
			name:        "only stray files: no commit",
			files:       map[string]string{"topics/.db.md.swp": "x"},
			wantIgnored: []string{"topics/.db.md.swp"},
		},
		{
			name:      "a new topic file and the config are memory files",
			files:     map[string]string{"topics/ops.md": "# Ops\n\n- [fact-003] Deploys on Tuesdays\n", ConfigPath: "[git]\nlock_wait = \"20s\"\n"},
			wantFiles: []string{ConfigPath, "topics/ops.md"},
			wantIDs:   []string{"fact-003"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := handEditStore(t)
			base := gitOut(t, s.Dir, "rev-parse", "HEAD")
			for p, d := range tc.files {
				writeRel(t, s, p, d)
			}
			for p, target := range tc.symlinks {
				must(t, os.Symlink(target, filepath.Join(s.Dir, filepath.FromSlash(p))))
			}
			he := commitHandEdits(t, s)
			if !reflect.DeepEqual(he.Ignored, tc.wantIgnored) {
				t.Errorf("Ignored = %q, want %q", he.Ignored, tc.wantIgnored)
			}
			if tc.wantFiles == nil {
				if he.Commit != "" || gitOut(t, s.Dir, "rev-parse", "HEAD") != base {
					t.Fatalf("committed %s, want no commit", he.Commit)
				}
				return
			}
			if got := committedFiles(t, s, "HEAD"); !reflect.DeepEqual(got, tc.wantFiles) {
				t.Errorf("commit holds %q, want %q", got, tc.wantFiles)
			}
			if got := gitOut(t, s.Dir, "log", "-1", "--format=%an"); got != "Pat Person" {
				t.Errorf("author %q", got)
			}
			trailers := gitOut(t, s.Dir, "log", "-1", "--format=%(trailers:key=Memctl-Entry,valueonly)")
			if got := strings.Fields(trailers); !reflect.DeepEqual(got, tc.wantIDs) {
				t.Errorf("Memctl-Entry %q, want %q", got, tc.wantIDs)
			}
			if all := gitOut(t, s.Dir, "log", "--all", "-p"); strings.Contains(all, "AWS_SECRET") || strings.Contains(all, "fact-07") || strings.Contains(all, "fact-08") {
				t.Errorf("a stray file reached git:\n%s", all)
			}
			status := gitOut(t, s.Dir, "status", "--porcelain", "--untracked-files=all")
			for _, p := range tc.wantIgnored {
				if strings.ContainsAny(p, "\\\n") {
					continue // git quotes these names
				}
				if p = strings.TrimSuffix(p, "/"); !strings.Contains(status, "?? "+p) && !strings.Contains(status, `?? "`+p) {
					t.Errorf("%s not untracked:\n%s", p, status)
				}
			}
			for _, p := range tc.wantFiles {
				if strings.Contains(status, p+"\n") {
					t.Errorf("%s still dirty:\n%s", p, status)
				}
			}
		})
	}
}

// TestHandDeletionRestored: managed ids deleted by hand are
// reported, and restored into the archive by a memctl commit after the
// person's (which holds exactly what they wrote), unless deletions are
// allowed; an entry moved by hand is not a deletion.
func TestHandDeletionRestored(t *testing.T) {
	tests := []struct {
		name         string
		files        map[string]string
		remove       []string
		allow        bool
		wantDeleted  []string
		wantRestored []string
	}{
		{
			name:         "an editor buffer saved over a newer file",
			files:        map[string]string{MainFile: strings.Replace(baseMain, "- [pref-002] Prefers short answers (user · 2026-01-02)\n", "", 1)},
			wantDeleted:  []string{"pref-002"},
			wantRestored: []string{"pref-002"},
		},
		{
			name:        "deletion allowed",
			files:       map[string]string{MainFile: strings.Replace(baseMain, "- [pref-002] Prefers short answers (user · 2026-01-02)\n", "", 1)},
			allow:       true,
			wantDeleted: []string{"pref-002"},
		},
		{
			name:         "a topic file deleted",
			remove:       []string{"topics/db.md"},
			wantDeleted:  []string{"fact-001", "fact-002"},
			wantRestored: []string{"fact-001", "fact-002"},
		},
		{
			name: "moved from MEMORY.md to a topic file",
			files: map[string]string{
				MainFile:       strings.Replace(baseMain, "- [dec-001] Postgres for orders (review · 2026-01-03)\n", "", 1),
				"topics/db.md": baseDB + "- [dec-001] Postgres for orders (review · 2026-01-03)\n",
			},
		},
		{
			name:  "moved into the archive by hand",
			files: map[string]string{MainFile: strings.Replace(baseMain, "- [pref-001] Prefers tabs (user · 2026-01-01)\n", "", 1) + "- [pref-001] Prefers tabs (user · 2026-01-01)\n"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := handEditStore(t)
			s.Config.Git.AllowHandDelete = tc.allow
			for p, d := range tc.files {
				writeRel(t, s, p, d)
			}
			for _, p := range tc.remove {
				must(t, os.Remove(filepath.Join(s.Dir, filepath.FromSlash(p))))
			}
			written := map[string]string{}
			for p := range tc.files {
				written[p] = readRel(t, s, p)
			}
			he := commitHandEdits(t, s)
			if !reflect.DeepEqual(he.Deleted, tc.wantDeleted) || !reflect.DeepEqual(he.Restored, tc.wantRestored) {
				t.Fatalf("Deleted %q Restored %q, want %q %q", he.Deleted, he.Restored, tc.wantDeleted, tc.wantRestored)
			}
			if he.KeptDeleted != (tc.allow && len(tc.wantDeleted) > 0) {
				t.Errorf("KeptDeleted = %v", he.KeptDeleted)
			}
			// The person's commit holds exactly what they wrote.
			for p, want := range written {
				if got := gitOut(t, s.Dir, "show", he.Commit+":"+p) + "\n"; got != want {
					t.Errorf("person's commit has %s:\n%s\nwant\n%s", p, got, want)
				}
			}
			personBody := gitOut(t, s.Dir, "log", "-1", "--format=%an%n%B", he.Commit)
			if !strings.HasPrefix(personBody, "Pat Person\n") {
				t.Errorf("person's commit:\n%s", personBody)
			}
			for _, id := range tc.wantDeleted {
				if !strings.Contains(personBody, id) {
					t.Errorf("person's commit does not report %s:\n%s", id, personBody)
				}
			}
			if len(tc.wantRestored) == 0 {
				if he.FixCommit != "" || gitOut(t, s.Dir, "rev-parse", "HEAD") != he.Commit {
					t.Fatalf("unexpected memctl commit %s", he.FixCommit)
				}
				if len(tc.wantDeleted) > 0 && !strings.Contains(strings.Join(he.Notes(), "\n"), "kept deleted") {
					t.Errorf("notes %q", he.Notes())
				}
				return
			}
			if gitOut(t, s.Dir, "rev-parse", "HEAD") != he.FixCommit || gitOut(t, s.Dir, "rev-parse", "HEAD^") != he.Commit {
				t.Fatalf("want the memctl commit right after the person's")
			}
			if got := gitOut(t, s.Dir, "log", "-1", "--format=%an"); got != "memctl" {
				t.Errorf("restore authored by %q", got)
			}
			_, archive, _ := strings.Cut(readRel(t, s, MainFile), "# Archive")
			for _, id := range tc.wantRestored {
				if !strings.Contains(archive, "["+id+"]") || !strings.Contains(archive, "removed by hand on 2026-03-04") {
					t.Errorf("%s not restored into the archive:\n%s", id, archive)
				}
			}
			if notes := strings.Join(he.Notes(), "\n"); !strings.Contains(notes, "restored into the archive") {
				t.Errorf("notes %q", notes)
			}
			if lint := loadLint(t, s); lint != "" {
				t.Errorf("lint after restore:\n%s", lint)
			}
			if status := gitOut(t, s.Dir, "status", "--porcelain"); status != "" {
				t.Errorf("status:\n%s", status)
			}
		})
	}
}

func loadLint(t *testing.T, s *Store) string {
	t.Helper()
	m, err := s.Load(context.Background())
	must(t, err)
	var out []string
	for _, p := range m.Lint() {
		if !strings.Contains(p.Message, "topic index") && !strings.Contains(p.Message, "not in the topic index") {
			out = append(out, p.String())
		}
	}
	return strings.Join(out, "\n")
}

// TestRestoreFinishedAfterACrash: a run killed between the
// person's commit and memctl's restore is finished by the next one.
func TestRestoreFinishedAfterACrash(t *testing.T) {
	ctx := context.Background()
	s := handEditStore(t)
	writeRel(t, s, MainFile, strings.Replace(baseMain, "- [pref-002] Prefers short answers (user · 2026-01-02)\n", "", 1))
	unlock, err := s.Lock(ctx)
	must(t, err)
	paths, _, err := s.handEditPaths(ctx)
	must(t, err)
	changed, err := s.Repo.Changed(ctx, paths, nil)
	must(t, err)
	must(t, s.commitPersonEdits(ctx, changed, &HandEdit{})) // then "killed"
	must(t, unlock())
	he := commitHandEdits(t, s)
	if he.Commit != "" || !reflect.DeepEqual(he.Restored, []string{"pref-002"}) {
		t.Fatalf("%+v", he)
	}
	if notes := strings.Join(he.Notes(), "\n"); !strings.Contains(notes, "hand edit deleted pref-002: restored into the archive") {
		t.Errorf("notes %q", notes)
	}
	if again := commitHandEdits(t, s); !again.Empty() {
		t.Fatalf("second run did something: %+v", again)
	}
}

// TestDuplicateIDRenumbered: an id written twice by hand is
// committed as written, then the later occurrence gets a fresh id (never
// reused: above the state's high-water mark) in a memctl commit that says so.
func TestDuplicateIDRenumbered(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		state  string // state.json before, "" = as memctl left it
		want   []Renumber
		inBody string
	}{
		{
			name:   "copied into a topic file",
			files:  map[string]string{"topics/db.md": baseDB + "- [pref-002] Prefers short answers, copied\n"},
			want:   []Renumber{{From: "pref-002", To: "pref-003", File: "topics/db.md", Line: 5, Occurrence: 2}},
			inBody: "renumbered pref-002 (second occurrence in topics/db.md) to pref-003",
		},
		{
			name:  "twice in MEMORY.md, three times in all",
			files: map[string]string{MainFile: strings.Replace(baseMain, "## Project constraints\n", "## Project constraints\n- [dec-001] Postgres 16 for orders\n", 1), "topics/db.md": baseDB + "- [dec-001] a third\n"},
			want: []Renumber{
				{From: "dec-001", To: "dec-002", File: MainFile, Line: 11, Occurrence: 2}, // the original: file order decides
				{From: "dec-001", To: "dec-003", File: "topics/db.md", Line: 5, Occurrence: 3},
			},
			inBody: "renumbered dec-001 (third occurrence in topics/db.md) to dec-003",
		},
		{
			name:   "ids are never reused",
			files:  map[string]string{"topics/db.md": baseDB + "- [fact-001] again\n"},
			state:  `{"last_id":{"fact":41}}`,
			want:   []Renumber{{From: "fact-001", To: "fact-042", File: "topics/db.md", Line: 5, Occurrence: 2}},
			inBody: "renumbered fact-001 (second occurrence in topics/db.md) to fact-042",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := handEditStore(t)
			if tc.state != "" {
				_, err := s.Write(context.Background(), map[string][]byte{StatePath: []byte(tc.state)}, CommitMessage{Subject: "test: state", Op: "test"})
				must(t, err)
			}
			for p, d := range tc.files {
				writeRel(t, s, p, d)
			}
			he := commitHandEdits(t, s)
			if !reflect.DeepEqual(he.Renumbered, tc.want) {
				t.Fatalf("Renumbered = %+v, want %+v", he.Renumbered, tc.want)
			}
			for p, d := range tc.files {
				if got := gitOut(t, s.Dir, "show", he.Commit+":"+p) + "\n"; got != d {
					t.Errorf("person's commit changed %s", p)
				}
			}
			body := gitOut(t, s.Dir, "log", "-1", "--format=%an%n%B")
			if !strings.HasPrefix(body, "memctl\n") || !strings.Contains(body, tc.inBody) {
				t.Errorf("memctl commit:\n%s", body)
			}
			m, err := s.Load(context.Background())
			must(t, err)
			if d := duplicateIDs(m); len(d) > 0 {
				t.Errorf("still duplicated: %q", d)
			}
			for _, r := range tc.want {
				if e := m.Find(r.To); e == nil || e.File != r.File || e.Line != r.Line {
					t.Errorf("%s not at %s:%d: %+v", r.To, r.File, r.Line, e)
				}
			}
			var st State
			must(t, json.Unmarshal([]byte(readRel(t, s, StatePath)), &st))
			last := tc.want[len(tc.want)-1].To
			p, n, _ := splitID(last)
			if st.LastID[p] != n {
				t.Errorf("state %v, want %s at %d", st.LastID, p, n)
			}
			if status := gitOut(t, s.Dir, "status", "--porcelain"); status != "" {
				t.Errorf("status:\n%s", status)
			}
		})
	}
}

// TestFindAll: readers can see every entry of a duplicated id.
func TestFindAll(t *testing.T) {
	m := memoryFrom(t, map[string]string{MainFile: baseMain, "topics/db.md": baseDB + "- [pref-002] copy\n"})
	var got []string
	for _, e := range m.FindAll("pref-002") {
		got = append(got, e.File)
	}
	sort.Strings(got)
	if want := []string{MainFile, "topics/db.md"}; !reflect.DeepEqual(got, want) {
		t.Errorf("FindAll = %q, want %q", got, want)
	}
	if m.Find("pref-002").File != MainFile {
		t.Errorf("Find does not return the first")
	}
}

// TestInitCommitsOnlyItsOwnFiles: files already in the directory
// are never committed under memctl's name by init; memory files among them
// are listed as uncommitted.
func TestInitCommitsOnlyItsOwnFiles(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	dir := filepath.Join(t.TempDir(), "mem")
	for p, d := range map[string]string{"topics/db.md": baseDB, "topics/scratch.env": "AWS_SECRET=abc\n", "topics/.db.md.swp": "x"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(dir, p), []byte(d), 0o644))
	}
	s, res, err := Init(context.Background(), dir)
	must(t, err)
	files := committedFiles(t, s, "HEAD")
	sort.Strings(files)
	if want := []string{".gitignore", ConfigPath, MainFile}; !reflect.DeepEqual(files, want) {
		t.Errorf("init committed %q, want %q", files, want)
	}
	if want := []string{"topics/db.md"}; !reflect.DeepEqual(res.Uncommitted, want) {
		t.Errorf("Uncommitted = %q, want %q", res.Uncommitted, want)
	}
}

func TestOnlyASecretTheEditWritesIsNew(t *testing.T) {
	const key = "ghp_R8kQ2vXm9LpT4sWz7NcB1yHd6JfG3aE5uK0o"
	old := "# Core profile\n- [pref-001] Tabs (user)\n- [cons-001] Deploy with " + key + " (user)\n"
	tests := []struct {
		name string
		cur  string
		want []SecretLine
	}{
		{"no secret", old[:strings.Index(old, "- [cons")] + "- [pref-002] Spaces (user)\n", nil},
		{"a committed secret, moved: not new", "# Core profile\n- [cons-001] Deploy with " + key + " (user)\n- [pref-001] Tabs (user)\n", nil},
		{"a secret written: its line and kind", old + "- [fact-001] The token is " + key + "\n", []SecretLine{{"MEMORY.md", 4, "github-token"}}},
		{"the committed line changed around the secret: new", strings.Replace(old, "Deploy with", "Deploys use", 1), []SecretLine{{"MEMORY.md", 3, "github-token"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := NewSecretLines("MEMORY.md", []byte(old), []byte(tt.cur))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
			for _, l := range got {
				if e := (&HandEditSecretError{Lines: got}); strings.Contains(e.Error()+e.Hint(), key) {
					t.Errorf("the error repeats the secret at %v", l)
				}
			}
		})
	}
}
