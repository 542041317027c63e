package mdmem

import (
	"context"
	"errors"
	"io/fs"
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
