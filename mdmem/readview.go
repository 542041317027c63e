package mdmem

import (
	"context"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"

	"github.com/gofrs/flock"
	"github.com/memctl/memctl/mdmem/gitstore"
)

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

// check refuses, without reading, what ReadFile would refuse.
func (v *ReadView) check(rel string) error {
	if of, ok := v.overlay[rel]; ok {
		if !of.exists {
			return &fs.PathError{Op: "open", Path: rel, Err: fs.ErrNotExist}
		}
		return nil
	}
	return checkMemoryFile(v.dir, rel)
}
