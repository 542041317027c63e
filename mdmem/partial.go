package mdmem

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// LoadTopic reads and parses topics/<slug>.md into m, through a ReadView:
// a memory read in part (LoadMain, then the topic files a run needs, as
// consolidate does with its match cache). A topic already in m is left as
// it is; a missing file adds nothing. Ids already in m keep their entry,
// as Load keeps the first of a duplicate.
func (m *Memory) LoadTopic(ctx context.Context, slug string) error {
	if m.Topics[slug] != nil {
		return nil
	}
	if err := ValidSlug(slug); err != nil {
		return err
	}
	v, err := OpenReadView(m.Dir)
	if err != nil {
		return err
	}
	defer v.Close()
	src, err := v.ReadFile(TopicPath(slug))
	if errors.Is(err, fs.ErrNotExist) {
		return ctx.Err()
	}
	if err != nil {
		return err
	}
	d := ParseDoc(TopicPath(slug), src)
	m.Topics[slug] = d
	if m.byID == nil {
		m.byID = map[string]*Entry{}
	}
	for _, e := range d.Entries {
		if _, dup := m.byID[e.ID]; e.ID != "" && !dup {
			m.byID[e.ID] = e
		}
	}
	return ctx.Err()
}

// SplitID splits an id as the id allocator reads it: "fact-012" into
// "fact" and 12; a random id into its prefix and -1; ok is false for what
// is no id memctl writes.
func SplitID(id string) (prefix string, n int, ok bool) { return splitID(id) }

// RandomIDs reports whether new ids are random ([git] ids = "random"):
// then the id allocator must know every id of the memory.
func (st *State) RandomIDs() bool { return st != nil && st.random != nil }

// ReadTopicEntry reads the entry at bytes [start, end) of
// topics/<slug>.md alone, as ParseDoc reads a one-line item there: at
// line, under the heading section. consolidate's match cache reads so an
// entry a lookup returns without parsing its file; it compares what it
// gets with what the file held when the cache was built. ok is false
// when those bytes are not one such item, or when the view reads the
// file from the committed tree (an unfinished write).
func ReadTopicEntry(dir, slug string, start, end, line int, section string) (e *Entry, ok bool, err error) {
	if err := ValidSlug(slug); err != nil {
		return nil, false, err
	}
	if start < 0 || end <= start || end-start > MaxFileBytes {
		return nil, false, nil
	}
	v, err := OpenReadView(dir)
	if err != nil {
		return nil, false, err
	}
	defer v.Close()
	rel := TopicPath(slug)
	if _, over := v.overlay[rel]; over {
		return nil, false, nil
	}
	if err := checkMemoryFile(dir, rel); err != nil {
		return nil, false, err
	}
	f, err := os.Open(filepath.Join(dir, filepath.FromSlash(rel)))
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	b := make([]byte, end-start)
	if _, err := f.ReadAt(b, int64(start)); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, false, nil
		}
		return nil, false, err
	}
	d := &Doc{Path: rel, Src: b, str: string(b), Topic: slug}
	if !d.parseSimple(b, 0) || len(d.Entries) != 1 || len(d.Headings) > 0 || len(d.Index) > 0 {
		return nil, false, nil
	}
	e = d.Entries[0]
	e.Start, e.End, e.HeadEnd, e.Line, e.Section = e.Start+start, e.End+start, e.HeadEnd+start, line, section
	return e, true, nil
}
