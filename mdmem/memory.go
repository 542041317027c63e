package mdmem

import (
	"context"
	"errors"
	"fmt"
	"github.com/memctl/memctl/mdmem/osfile"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MaxFileBytes caps the size of one memory file memctl will read.
const MaxFileBytes = 64 << 20

// Memory is the parsed content of a memory directory: MEMORY.md and every
// topic file.
type Memory struct {
	Dir    string
	Main   *Doc
	Topics map[string]*Doc // by slug
	byID   map[string]*Entry
}

// Load reads and parses MEMORY.md and topics/*.md under dir. A missing
// MEMORY.md is an empty memory. Symlinks and non-regular files are refused
// so nothing outside the directory is read.
//
// It reads through a ReadView (Walk): never a half-applied write. A
// reader that needs one file at a time walks the memory instead: Load
// holds every file's parse at once.
func Load(ctx context.Context, dir string) (*Memory, error) {
	m := &Memory{Dir: dir, Topics: map[string]*Doc{}}
	err := Walk(ctx, dir, func(d *Doc) error {
		if d.Topic == "" {
			m.Main = d
		} else {
			m.Topics[d.Topic] = d
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	m.reindex()
	return m, nil
}

// LoadMain reads and parses MEMORY.md only (the core, Pending, the topic
// index, the archive), through a ReadView, for what needs no topic file:
// an idle consolidate measures the core and stops.
func LoadMain(ctx context.Context, dir string) (*Memory, error) {
	v, err := OpenReadView(dir)
	if err != nil {
		return nil, err
	}
	defer v.Close()
	src, err := v.ReadFile(MainFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	m := &Memory{Dir: dir, Main: ParseDoc(MainFile, src), Topics: map[string]*Doc{}}
	m.reindex()
	return m, ctx.Err()
}

// ListTopicSlugs lists the slugs of dir/topics/*.md, sorted; a topics/
// that is a symlink is refused.
func ListTopicSlugs(dir string) ([]string, error) {
	td := filepath.Join(dir, TopicDir)
	fi, err := os.Lstat(td)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory (a symlink or file there is refused: memctl only reads inside the memory directory)", td)
	}
	ents, err := os.ReadDir(td)
	if err != nil {
		return nil, err
	}
	var slugs []string
	for _, de := range ents {
		name := de.Name()
		if !strings.HasSuffix(name, ".md") || strings.HasPrefix(name, ".") {
			continue
		}
		slug := strings.TrimSuffix(name, ".md")
		if ValidSlug(slug) != nil {
			continue
		}
		slugs = append(slugs, slug)
	}
	sort.Strings(slugs)
	return slugs, nil
}

// ReadMemoryFile reads a memory-relative file, refusing symlinks,
// non-regular files and files over MaxFileBytes.
func ReadMemoryFile(dir, rel string) ([]byte, error) {
	if err := checkMemoryFile(dir, rel); err != nil {
		return nil, err
	}
	return osfile.ReadFile(filepath.Join(dir, filepath.FromSlash(rel)))
}

// checkMemoryFile refuses what ReadMemoryFile refuses, without reading:
// a missing file, a symlink, a non-regular file, a file over MaxFileBytes.
func checkMemoryFile(dir, rel string) error {
	fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file (symlinks are refused: memctl only reads inside the memory directory)", rel)
	}
	if fi.Size() > MaxFileBytes {
		return fmt.Errorf("%s is %d bytes, over memctl's limit of %d", rel, fi.Size(), MaxFileBytes)
	}
	return nil
}

// ValidSlug checks a topic name: lower-case letters, digits, '-' and '_',
// starting with a letter or digit, at most 64 bytes. This rules out path
// traversal ("../x"), separators and hidden files.
func ValidSlug(slug string) error {
	if slug == "" || len(slug) > 64 {
		return fmt.Errorf("invalid topic %q: want 1 to 64 characters", slug)
	}
	for i, c := range slug {
		ok := c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '-' || c == '_')
		if !ok {
			return fmt.Errorf("invalid topic %q: use lower-case letters, digits, '-' and '_' (no paths)", slug)
		}
	}
	return nil
}

// Slugify turns a free topic name ("Databases & middleware") into a valid
// slug ("databases-middleware"), or "" if nothing is left.
func Slugify(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		switch {
		case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
			b.WriteRune(c)
			dash = false
		case b.Len() > 0 && !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	s := strings.TrimRight(b.String(), "-")
	if len(s) > 64 {
		s = strings.TrimRight(s[:64], "-")
	}
	return s
}

func (m *Memory) reindex() {
	m.byID = map[string]*Entry{}
	for _, e := range m.Entries() {
		if e.ID != "" {
			if _, dup := m.byID[e.ID]; !dup {
				m.byID[e.ID] = e
			}
		}
	}
}

// Docs returns MEMORY.md followed by the topic files in slug order.
func (m *Memory) Docs() []*Doc {
	docs := []*Doc{m.Main}
	for _, slug := range m.TopicSlugs() {
		docs = append(docs, m.Topics[slug])
	}
	return docs
}

// TopicSlugs returns the topic slugs, sorted.
func (m *Memory) TopicSlugs() []string {
	slugs := make([]string, 0, len(m.Topics))
	for s := range m.Topics {
		slugs = append(slugs, s)
	}
	sort.Strings(slugs)
	return slugs
}

// Entries returns every entry in file order: MEMORY.md, then topic files.
func (m *Memory) Entries() []*Entry {
	var all []*Entry
	for _, d := range m.Docs() {
		all = append(all, d.Entries...)
	}
	return all
}

// Find returns the entry with the given id, or nil.
func (m *Memory) Find(id string) *Entry { return m.byID[id] }

// Doc returns the document holding path, or nil.
func (m *Memory) Doc(path string) *Doc {
	if path == MainFile {
		return m.Main
	}
	return m.Topics[TopicSlug(path)]
}
