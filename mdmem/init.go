package mdmem

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/memctl/memctl/mdmem/gitstore"
	"github.com/memctl/memctl/templates"
)

// InitResult says what Init did.
type InitResult struct {
	Dir        string   `json:"dir"`
	CreatedGit bool     `json:"created_git"`   // a new git repository was created
	Created    []string `json:"created_files"` // memory-relative files created or extended
	Commit     string   `json:"commit"`        // the init commit, "" if nothing changed
	// Uncommitted lists memory files that were there before init and are
	// not committed: init leaves them to the person (the next memctl write
	// commits them as their hand edit).
	Uncommitted []string `json:"uncommitted_files"`
}

// Init creates the memory directory dir, or adopts an existing directory
// or git repository: it writes what is missing of MEMORY.md, topics/,
// .memctl/config.toml and .gitignore, and commits them. Existing files are
// never overwritten; running it twice changes nothing.
func Init(ctx context.Context, dir string) (*Store, *InitResult, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, nil, err
	}
	if fi, err := os.Lstat(abs); err == nil && !fi.IsDir() {
		return nil, nil, fmt.Errorf("%s exists and is not a directory", abs)
	}
	if _, err := os.Lstat(abs); errors.Is(err, fs.ErrNotExist) {
		// A new memory is its owner's alone: the directory is 0700, so no
		// other user can read any file in it, whatever the file's mode.
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			return nil, nil, err
		}
		if err := os.Mkdir(abs, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, nil, err
		}
	}
	if err := os.MkdirAll(filepath.Join(abs, MarkerDir), 0o755); err != nil {
		return nil, nil, err
	}
	repo, created, err := gitstore.Init(ctx, abs)
	if err != nil {
		return nil, nil, err
	}
	cfg, err := LoadConfig(abs)
	if err != nil {
		return nil, nil, err
	}
	s := &Store{Dir: abs, Config: cfg, Repo: repo, Now: time.Now}
	res := &InitResult{Dir: abs, CreatedGit: created}
	unlock, err := s.Lock(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer unlock()
	files := map[string][]byte{}
	for _, f := range []struct{ path, tmpl string }{{MainFile, "MEMORY.md"}, {ConfigPath, "config.toml"}} {
		if _, err := os.Lstat(filepath.Join(abs, filepath.FromSlash(f.path))); errors.Is(err, fs.ErrNotExist) {
			files[f.path] = []byte(templates.Embedded(f.tmpl))
		} else if err != nil {
			return nil, nil, err
		}
	}
	if gi, changed, err := gitignoreWithMemctl(abs); err != nil {
		return nil, nil, err
	} else if changed {
		files[".gitignore"] = gi
	}
	if err := os.MkdirAll(filepath.Join(abs, TopicDir), 0o755); err != nil {
		return nil, nil, err
	}
	res.Created = slices.Sorted(maps.Keys(files))
	// Commit only what init writes, through the write transaction (commit
	// first, then the files). Memory files already there but not
	// committed are the person's: they stay uncommitted (listed in
	// Uncommitted), and the next memctl write commits them as the person's
	// hand edit, without any stray file of topics/.
	if len(files) > 0 {
		tx, err := s.Begin(ctx)
		if err != nil {
			return nil, nil, err
		}
		for _, p := range res.Created {
			if err := tx.PutOnDisk(ctx, p, files[p]); err != nil {
				return nil, nil, err
			}
		}
		if res.Commit, err = tx.Commit(ctx, CommitMessage{Subject: "init: memory repository", Op: "init"}); err != nil {
			return nil, nil, err
		}
	}
	paths, _, err := s.handEditPaths(ctx)
	if err != nil {
		return nil, nil, err
	}
	if res.Uncommitted, err = s.Repo.Changed(ctx, paths, nil); err != nil {
		return nil, nil, err
	}
	return s, res, nil
}

// gitignoreWithMemctl returns .gitignore with memctl's lines added, and
// whether that changed it.
func gitignoreWithMemctl(dir string) ([]byte, bool, error) {
	p := filepath.Join(dir, ".gitignore")
	old, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	want := templates.Embedded("gitignore.tmpl")
	var add []string
	for _, line := range strings.Split(want, "\n") {
		if strings.HasPrefix(line, ".memctl/") && !bytes.Contains(old, []byte(line)) {
			add = append(add, line)
		}
	}
	if len(add) == 0 {
		return nil, false, nil
	}
	if len(old) == 0 {
		return []byte(want), true, nil
	}
	out := append([]byte(nil), old...)
	if !bytes.HasSuffix(out, []byte("\n")) {
		out = append(out, '\n')
	}
	out = append(out, "# memctl: queue and cache are local, never committed\n"...)
	out = append(out, strings.Join(add, "\n")+"\n"...)
	return out, true, nil
}
